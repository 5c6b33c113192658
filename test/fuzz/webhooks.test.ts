import { fuzzSuite } from "./suite";

await fuzzSuite("webhooks");
