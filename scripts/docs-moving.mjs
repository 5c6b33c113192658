// `npm run docs:moving`: starts a throwaway Salvo, reads its OpenAPI document and writes
// docs/MOVING.md from it and docs/MOVING.intro.md, and README's endpoint index
// (test/moving-guide.test.ts fails when a committed file is not what this writes).
import { readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { startDevServer } from "./lib/dev-server.mjs";
import { renderMovingGuide } from "./lib/moving-guide.mjs";
import { renderEndpointIndex, withEndpointIndex } from "./lib/endpoint-index.mjs";

const docs = join(import.meta.dirname, "..", "docs");
const server = await startDevServer({ quiet: true, mailLab: false });
try {
  const document = await (await fetch(`${server.url}/openapi.json`)).json();
  const guide = renderMovingGuide(document, readFileSync(join(docs, "MOVING.intro.md"), "utf8"));
  writeFileSync(join(docs, "MOVING.md"), guide);
  const readme = join(docs, "..", "README.md");
  writeFileSync(readme, withEndpointIndex(readFileSync(readme, "utf8"), renderEndpointIndex(document)));
  console.log(`Wrote docs/MOVING.md and README's endpoint index (${Object.keys(document.paths).length} paths).`);
} finally {
  await server.stop();
}
