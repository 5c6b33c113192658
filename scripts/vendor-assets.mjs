// Copies the API reference UI (Swagger UI) from node_modules into the Worker's static assets,
// so /docs works with no network at all.
import { copyFileSync, mkdirSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const source = join(root, "node_modules", "swagger-ui-dist");
const target = join(root, "public", "vendor", "swagger-ui");
mkdirSync(target, { recursive: true });
for (const file of ["swagger-ui-bundle.js", "swagger-ui.css", "favicon-32x32.png"]) {
  copyFileSync(join(source, file), join(target, file));
}
