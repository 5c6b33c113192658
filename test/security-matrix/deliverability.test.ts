import { matrixSuite } from "./suite";

await matrixSuite("deliverability");
