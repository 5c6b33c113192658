// `npm run dev`: prepare local secrets, migrate the local D1 database, seed the demo account, then serve.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { seedDemoAccount } from "./seed.mjs";

const root = join(import.meta.dirname, "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const port = process.env.PORT ?? "8787";
// SALVO_STATE_DIR keeps D1, Durable Object and queue state apart from the default .wrangler/state,
// so tests and benchmarks can run a throwaway instance beside a developer's own.
const persist = process.env.SALVO_STATE_DIR ? ["--persist-to", process.env.SALVO_STATE_DIR] : [];

/** Local secrets that must never keep the example's placeholder: each gets a fresh random value. */
const GENERATED = {
  ADMIN_TOKEN: () => randomBytes(24).toString("base64url"),
  // A keyring of one key (src/platform/crypto.ts): key id "local", 32 random bytes.
  SECRETS_KEY: () => `local:${randomBytes(32).toString("base64")}`,
};

const withGenerated = (line) => {
  const name = line.split("=")[0];
  return name in GENERATED ? `${name}=${GENERATED[name]()}` : line;
};

/** Creates .dev.vars from the example (with random secrets), or adds variables it lacks. */
function ensureDevVars() {
  const path = join(root, ".dev.vars");
  const example = readFileSync(join(root, ".dev.vars.example"), "utf8");
  if (!existsSync(path)) {
    writeFileSync(path, example.split("\n").map(withGenerated).join("\n"));
    console.log(`Created .dev.vars with a random ${Object.keys(GENERATED).join(" and ")}.`);
    return;
  }
  const current = readFileSync(path, "utf8");
  const names = (text) => new Set([...text.matchAll(/^([A-Z_]+)=/gm)].map((m) => m[1]));
  const have = names(current);
  const missing = example
    .split("\n")
    .filter((line) => /^[A-Z_]+=/.test(line) && !have.has(line.split("=")[0]))
    .map(withGenerated);
  if (missing.length === 0) return;
  writeFileSync(path, `${current.trimEnd()}\n${missing.join("\n")}\n`);
  console.log(`Added to .dev.vars: ${missing.map((line) => line.split("=")[0]).join(", ")}`);
}

function run(args) {
  const result = spawnSync(wrangler, [...args, ...persist], { cwd: root, stdio: "inherit", env: { ...process.env, CI: "true" } });
  if (result.status !== 0) process.exit(result.status ?? 1);
}

ensureDevVars();
run(["d1", "migrations", "apply", "DB", "--local"]);
const apiKey = await seedDemoAccount(run);

console.log(`
  Salvo is starting on http://127.0.0.1:${port}
  Demo account: demo@salvo.local
  Demo account API key: ${apiKey}
  Try: curl -H "X-API-Key: ${apiKey}" http://127.0.0.1:${port}/api/v1/account
`);

// A second instance (tests, benchmarks) must not fight the first over the devtools port.
const inspector = process.env.INSPECTOR_PORT ? ["--inspector-port", process.env.INSPECTOR_PORT] : [];
// wrangler dev's local trace and log store (<state>/v3/observability) records every request's full
// URL and ignores redact_query_string, so an api_key in a query string would be kept there. It
// stays off unless SALVO_LOCAL_OBSERVABILITY=true (then send keys in the X-API-Key header).
const localObservability = process.env.SALVO_LOCAL_OBSERVABILITY === "true" ? "true" : "false";
const server = spawn(wrangler, ["dev", "--ip", "127.0.0.1", "--port", port, "--test-scheduled", ...inspector, ...persist], {
  cwd: root,
  stdio: "inherit",
  env: { ...process.env, X_LOCAL_OBSERVABILITY: localObservability },
});
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => server.kill(signal));
server.on("exit", (code) => process.exit(code ?? 0));
