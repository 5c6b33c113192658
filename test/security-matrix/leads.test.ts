import { matrixSuite } from "./suite";

await matrixSuite("leads");
