import { fuzzSuite } from "./suite";

await fuzzSuite("ops");
