import { matrixSuite } from "./suite";

await matrixSuite("lead-lists");
