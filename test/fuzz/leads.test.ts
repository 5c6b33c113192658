import { fuzzSuite } from "./suite";

await fuzzSuite("leads");
