import { fuzzSuite } from "./suite";

await fuzzSuite("mailboxes");
