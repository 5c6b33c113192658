import { matrixSuite } from "./suite";

await matrixSuite("campaigns");
