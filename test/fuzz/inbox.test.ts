import { fuzzSuite } from "./suite";

await fuzzSuite("inbox");
