import { matrixSuite } from "./suite";

await matrixSuite("mailboxes");
