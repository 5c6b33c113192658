import { matrixSuite } from "./suite";

await matrixSuite("analytics");
