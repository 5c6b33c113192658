import { matrixSuite } from "./suite";

await matrixSuite("verification");
