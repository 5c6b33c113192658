import { fuzzSuite } from "./suite";

await fuzzSuite("verification");
