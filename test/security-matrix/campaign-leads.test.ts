import { matrixSuite } from "./suite";

await matrixSuite("campaign-leads");
