import { fuzzSuite } from "./suite";

await fuzzSuite("account");
