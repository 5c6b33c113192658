import { fuzzSuite } from "./suite";

await fuzzSuite("deliverability");
