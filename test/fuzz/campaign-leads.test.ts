import { fuzzSuite } from "./suite";

await fuzzSuite("campaign-leads");
