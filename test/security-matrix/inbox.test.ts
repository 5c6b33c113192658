import { matrixSuite } from "./suite";

await matrixSuite("inbox");
