import { matrixSuite } from "./suite";

await matrixSuite("webhooks");
