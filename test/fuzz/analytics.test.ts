import { fuzzSuite } from "./suite";

await fuzzSuite("analytics");
