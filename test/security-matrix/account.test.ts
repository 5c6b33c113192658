import { matrixSuite } from "./suite";

await matrixSuite("account");
