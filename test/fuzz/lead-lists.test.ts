import { fuzzSuite } from "./suite";

await fuzzSuite("lead-lists");
