import { fuzzSuite } from "./suite";

await fuzzSuite("campaigns");
