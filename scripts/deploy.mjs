// `npm run deploy -- --env <name>`: creates what the environment lacks (its D1 database, its queues
// and dead-letter queues, the secrets wrangler.toml requires, asking for them), writes what it
// learns (the database id, the public origin) into wrangler.toml, applies the remote migrations
// and deploys. `--dry-run` needs no login: it checks the configuration, builds the bundle with
// `wrangler deploy --dry-run` and prints the plan (every environment unless --env names one).
import { spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, relative, resolve } from "node:path";
import { createInterface } from "node:readline/promises";
import { pathToFileURL } from "node:url";
import { unstable_readConfig } from "wrangler";
import { config as parseVars } from "../src/config.ts";

const root = resolve(import.meta.dirname, "..");
const PLACEHOLDER_ID = /^0{8}-0{4}-0{4}-0{4}-0{12}$/;
/** Hosts that only stand in for a deployment's real origin (RFC 2606). */
const PLACEHOLDER_HOST = /(^|\.)example\.(com|net|org)$|\.example$|\.test$/;

/** Secrets `npm run deploy` can make up when the operator gives none: random, shown once. */
const GENERATED = {
  ADMIN_TOKEN: () => randomBytes(24).toString("base64url"),
  SECRETS_KEY: () => `k1:${randomBytes(32).toString("base64")}`,
};

export function parseArgs(argv) {
  const options = { env: undefined, dryRun: false, config: "wrangler.toml" };
  for (let i = 0; i < argv.length; i++) {
    const [flag, inline] = argv[i].split(/=(.*)/s);
    const value = () => inline ?? argv[++i];
    if (flag === "--dry-run") options.dryRun = true;
    else if (flag === "--env" || flag === "-e") options.env = value();
    else if (flag === "--config" || flag === "-c") options.config = value();
    else throw new Error(`Unknown option ${argv[i]} (use --env <name>, --dry-run, --config <file>)`);
  }
  if (options.env === "") throw new Error("--env needs a name");
  return options;
}

/** The environments a wrangler.toml declares (`[env.<name>]`). */
export function declaredEnvironments(text) {
  return [...new Set([...text.matchAll(/^\[env\.([\w-]+)\]\s*$/gm)].map((match) => match[1]))];
}

/** Everything deploying one environment involves, read from its resolved configuration. */
export function describeEnvironment(configPath, env) {
  const resolved = unstable_readConfig({ config: configPath, env });
  const queues = resolved.queues ?? {};
  const names = [
    ...(queues.producers ?? []).map((producer) => producer.queue),
    ...(queues.consumers ?? []).flatMap((consumer) => [consumer.queue, consumer.dead_letter_queue]),
  ].filter(Boolean);
  return {
    env,
    worker: resolved.name,
    vars: resolved.vars ?? {},
    databases: (resolved.d1_databases ?? []).map((db) => ({ binding: db.binding, name: db.database_name, id: db.database_id, migrationsDir: db.migrations_dir ?? "migrations" })),
    queues: [...new Set(names)],
    buckets: [...new Set((resolved.r2_buckets ?? []).map((bucket) => bucket.bucket_name))],
    secrets: resolved.secrets?.required ?? [],
    crons: resolved.triggers?.crons ?? [],
  };
}

/**
 * What stops a deployment, as sentences: vars the Worker would refuse (checked by its own parser,
 * src/config.ts), and a missing database binding. A placeholder PUBLIC_URL or database id is not
 * a problem: the deploy asks for the one and creates the other.
 */
export function configProblems(target) {
  const problems = [];
  try {
    parseVars({ ...target.vars });
  } catch (error) {
    problems.push(error.message);
  }
  const url = URL.canParse(target.vars.PUBLIC_URL ?? "") ? new URL(target.vars.PUBLIC_URL) : null;
  if (url && !placeholderOrigin(target.vars.PUBLIC_URL) && url.protocol !== "https:") {
    problems.push(`PUBLIC_URL must be https for a deployed environment (got ${target.vars.PUBLIC_URL})`);
  }
  if (!target.databases.some((db) => db.binding === "DB")) problems.push("no D1 database bound as DB");
  if (!target.databases.some((db) => db.binding === "DIRECTORY")) problems.push("no D1 database bound as DIRECTORY (the accounts' shards)");
  if (target.vars.ALLOW_INSECURE_WEBHOOKS === "true" || target.vars.ALLOW_LOCAL_MAIL_HOSTS === "true") {
    problems.push("ALLOW_INSECURE_WEBHOOKS and ALLOW_LOCAL_MAIL_HOSTS are for local work only; set them to \"false\"");
  }
  return problems;
}

export function placeholderOrigin(value) {
  if (!value || !URL.canParse(value)) return true;
  const host = new URL(value).hostname;
  return PLACEHOLDER_HOST.test(host) || host === "127.0.0.1" || host === "localhost";
}

/**
 * The lines of one `[header]` or `[[header]]` table: from its header to the next header. Of several
 * `[[header]]` tables, the first one holding the line `where` matches (the first of all without it).
 */
function tableRange(lines, header, where) {
  for (let start = 0; start < lines.length; start++) {
    if (lines[start].trim() !== header) continue;
    let end = start + 1;
    while (end < lines.length && !/^\s*\[/.test(lines[end])) end++;
    if (!where || lines.slice(start + 1, end).some((line) => where.test(line))) return { start, end };
  }
  return null;
}

/** Sets `key = "value"` in the (first, or first `where`-matching) table with that header, keeping every other line (and comment) as it is. */
export function setTomlString(text, header, key, value, where) {
  const lines = text.split("\n");
  const range = tableRange(lines, header, where);
  if (!range) throw new Error(`wrangler.toml has no ${header}${where ? ` with ${where}` : ""}`);
  const pattern = new RegExp(`^(\\s*${key}\\s*=\\s*)"[^"]*"(.*)$`);
  const line = `${key} = ${JSON.stringify(value)}`;
  for (let i = range.start + 1; i < range.end; i++) {
    if (pattern.test(lines[i])) {
      lines[i] = lines[i].replace(pattern, (_, head, tail) => `${head}${JSON.stringify(value)}${tail}`);
      return lines.join("\n");
    }
  }
  let at = range.end;
  while (at > range.start + 1 && lines[at - 1].trim() === "") at--;
  lines.splice(at, 0, line);
  return lines.join("\n");
}

/** Sets the id of the environment's D1 database bound as `binding` (DB, DB_1, ..., DIRECTORY). */
export function setDatabaseId(text, env, binding, id) {
  return setTomlString(text, `[[env.${env}.d1_databases]]`, "database_id", id, new RegExp(`^\\s*binding\\s*=\\s*"${binding}"`));
}

export function setPublicUrl(text, env, origin) {
  return setTomlString(text, `[env.${env}.vars]`, "PUBLIC_URL", origin);
}

/** Runs wrangler (never interactive: CI=true), answering its status and output. */
export function runWrangler(args, { quiet = false } = {}) {
  const bin = join(root, "node_modules", ".bin", "wrangler");
  const result = spawnSync(bin, args, {
    cwd: root,
    encoding: "utf8",
    stdio: quiet ? ["ignore", "pipe", "pipe"] : ["ignore", "inherit", "inherit"],
    env: { ...process.env, CI: "true", WRANGLER_SEND_METRICS: "false" },
  });
  return { status: result.status ?? 1, stdout: result.stdout ?? "", stderr: result.stderr ?? "" };
}

function must(result, what) {
  if (result.status !== 0) throw new Error(`${what} failed${result.stderr ? `: ${result.stderr.trim().split("\n").slice(-3).join(" ")}` : ""}`);
  return result;
}

/** A JSON answer from wrangler's output, which may carry banner lines before it. */
function jsonFrom(output) {
  const start = output.search(/^[[{]/m);
  return JSON.parse(start < 0 ? output : output.slice(start));
}

function migrationCount(dir = "migrations") {
  return readdirSync(join(root, dir)).filter((name) => name.endsWith(".sql")).length;
}

/** The plan for one environment without asking Cloudflare anything: what a deploy would check, create, ask and run. */
export function dryRunPlan(target, configFile) {
  const envFlag = `--env ${target.env}`;
  const steps = [];
  for (const db of target.databases) {
    steps.push(
      PLACEHOLDER_ID.test(db.id ?? "")
        ? `create D1 database ${db.name} (${db.binding}) unless it exists, and write its id into ${configFile} [[env.${target.env}.d1_databases]]`
        : `use D1 database ${db.name} (${db.binding}) ${db.id}`,
    );
  }
  for (const queue of target.queues) steps.push(`create queue ${queue} unless it exists`);
  for (const bucket of target.buckets) steps.push(`create R2 bucket ${bucket} unless it exists`);
  if (target.secrets.length > 0) steps.push(`ask for each secret of ${target.secrets.join(", ")} the Worker ${target.worker} lacks (empty answer: generate one) and upload them with the deploy`);
  if (placeholderOrigin(target.vars.PUBLIC_URL)) {
    steps.push(`ask for PUBLIC_URL, now a placeholder (${target.vars.PUBLIC_URL}), and write this deployment's https origin into ${configFile} [env.${target.env}.vars]`);
  }
  for (const db of target.databases) {
    steps.push(`apply migrations: wrangler d1 migrations apply ${db.binding} --remote ${envFlag} (${migrationCount(db.migrationsDir)} files; those already applied are skipped)`);
  }
  steps.push(`deploy: wrangler deploy ${envFlag} (Worker ${target.worker}${target.crons.length ? `, cron ${target.crons.join(" ")}` : ""})`);
  return steps;
}

/** Prompts on the terminal; answers from the environment variable of the same name when there is no terminal (CI). */
function terminalAsk() {
  return async (question, { name, secret = false } = {}) => {
    if (name && process.env[name]) return process.env[name];
    if (!process.stdin.isTTY) throw new Error(`${name ?? question}: no terminal to ask on; set the environment variable ${name}`);
    const rl = createInterface({ input: process.stdin, output: process.stdout, terminal: true });
    if (secret) {
      // Echo nothing while a secret is typed.
      rl._writeToOutput = (chunk) => {
        if (chunk.includes(question)) process.stdout.write(chunk);
      };
    }
    try {
      const answer = await rl.question(question);
      if (secret) process.stdout.write("\n");
      return answer.trim();
    } finally {
      rl.close();
    }
  };
}

async function ensureDatabase(target, db, { wrangler, log, configPath }) {
  if (!PLACEHOLDER_ID.test(db.id ?? "")) return log(`D1 database ${db.name}: ${db.id}`);
  const listed = jsonFrom(must(wrangler(["d1", "list", "--json"], { quiet: true }), "wrangler d1 list").stdout);
  let id = listed.find((existing) => existing.name === db.name)?.uuid;
  if (id) log(`D1 database ${db.name} exists: ${id}`);
  else {
    const created = must(wrangler(["d1", "create", db.name], { quiet: true }), `wrangler d1 create ${db.name}`);
    id = created.stdout.match(/"database_id":\s*"([0-9a-f-]{36})"|database_id\s*=\s*"([0-9a-f-]{36})"/)?.slice(1).find(Boolean);
    if (!id) throw new Error(`wrangler d1 create ${db.name} printed no database_id:\n${created.stdout}`);
    log(`D1 database ${db.name} created: ${id}`);
  }
  writeFileSync(configPath, setDatabaseId(readFileSync(configPath, "utf8"), target.env, db.binding, id));
  log(`  wrote its id into ${relative(root, configPath)}`);
}

function ensureQueue(queue, { wrangler, log }) {
  const created = wrangler(["queues", "create", queue], { quiet: true });
  if (created.status === 0) return log(`queue ${queue} created`);
  if (/already (exists|taken)|11009/i.test(created.stdout + created.stderr)) return log(`queue ${queue} exists`);
  throw new Error(`wrangler queues create ${queue} failed: ${(created.stderr || created.stdout).trim()}`);
}

function ensureBucket(bucket, { wrangler, log }) {
  const created = wrangler(["r2", "bucket", "create", bucket], { quiet: true });
  if (created.status === 0) return log(`R2 bucket ${bucket} created`);
  if (/already exists|10004/i.test(created.stdout + created.stderr)) return log(`R2 bucket ${bucket} exists`);
  throw new Error(`wrangler r2 bucket create ${bucket} failed: ${(created.stderr || created.stdout).trim()}`);
}

/** The required secrets the deployed Worker lacks, asked for (or generated); none when it has them all. */
async function missingSecrets(target, { wrangler, ask, log }) {
  if (target.secrets.length === 0) return {};
  const listed = wrangler(["secret", "list", "--env", target.env, "--format", "json"], { quiet: true });
  // A Worker not deployed yet has no secrets (and `secret list` fails for it).
  const present = new Set(listed.status === 0 ? jsonFrom(listed.stdout).map((secret) => secret.name) : []);
  const values = {};
  for (const name of target.secrets.filter((secret) => !present.has(secret))) {
    const given = await ask(`${name} for ${target.worker} (empty: generate one): `, { name, secret: true });
    if (given) values[name] = given;
    else if (GENERATED[name]) {
      values[name] = GENERATED[name]();
      // Shown once, because Cloudflare never shows a secret again: the operator needs ADMIN_TOKEN to
      // provision accounts, and SECRETS_KEY's old key to rotate it (README "SECRETS_KEY").
      log(`  generated ${name} (store it in your password manager; it is not shown again): ${values[name]}`);
    } else throw new Error(`${name} is required`);
  }
  if (Object.keys(values).length === 0) log(`secrets ${target.secrets.join(", ")}: set`);
  return values;
}

async function ensurePublicUrl(target, { ask, log, configPath }) {
  if (!placeholderOrigin(target.vars.PUBLIC_URL)) return;
  const answer = await ask(`PUBLIC_URL for ${target.worker} (its https origin, e.g. https://api.salvo.example.org): `, { name: "PUBLIC_URL" });
  const origin = URL.canParse(answer) ? new URL(answer).origin : "";
  if (!origin.startsWith("https://") || placeholderOrigin(origin)) throw new Error(`PUBLIC_URL must be this deployment's https origin (got "${answer}")`);
  writeFileSync(configPath, setPublicUrl(readFileSync(configPath, "utf8"), target.env, origin));
  target.vars.PUBLIC_URL = origin;
  log(`PUBLIC_URL ${origin}: written into ${relative(root, configPath)}`);
}

/** Builds the bundle as `wrangler deploy` would, uploading nothing. */
function build(target, configFile, { wrangler }) {
  const outdir = mkdtempSync(join(tmpdir(), "salvo-build-"));
  try {
    must(wrangler(["deploy", "--dry-run", "--outdir", outdir, "--env", target.env, "--config", configFile], { quiet: true }), `wrangler deploy --dry-run --env ${target.env}`);
    const bundle = join(outdir, "index.js");
    return readFileSync(bundle).length;
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}

export async function main(argv, { wrangler = runWrangler, ask = terminalAsk(), log = console.log } = {}) {
  const options = parseArgs(argv);
  const configPath = resolve(root, options.config);
  const configFile = relative(root, configPath);
  const declared = declaredEnvironments(readFileSync(configPath, "utf8"));
  if (options.env && !declared.includes(options.env)) {
    throw new Error(`${configFile} declares no environment "${options.env}" (it has: ${declared.join(", ")})`);
  }
  if (!options.env && !options.dryRun) throw new Error(`Name the environment to deploy: npm run deploy -- --env <${declared.join("|")}>`);

  const envs = options.env ? [options.env] : declared;
  let failed = false;
  for (const env of envs) {
    const target = describeEnvironment(configPath, env);
    log(`\n${options.dryRun ? "Plan for" : "Deploying"} environment ${env} (Worker ${target.worker}):`);
    const problems = configProblems(target);
    if (problems.length > 0) {
      for (const problem of problems) log(`  ✗ ${problem}`);
      failed = true;
      continue;
    }
    if (options.dryRun) {
      const bytes = build(target, configFile, { wrangler });
      log(`  ✓ configuration valid; bundle built (${Math.round(bytes / 1024)} KiB, nothing uploaded)`);
      for (const step of dryRunPlan(target, configFile)) log(`  - would ${step}`);
      continue;
    }
    const context = { wrangler, ask, log: (line) => log(`  ${line}`), configPath };
    must(wrangler(["whoami"], { quiet: true }), "wrangler whoami (run `npx wrangler login` first)");
    for (const db of target.databases) await ensureDatabase(target, db, context);
    for (const queue of target.queues) ensureQueue(queue, context);
    for (const bucket of target.buckets) ensureBucket(bucket, context);
    await ensurePublicUrl(target, context);
    const secrets = await missingSecrets(target, context);
    // Every shard and the directory; then the first account placed on a shard claims its id range.
    for (const db of target.databases) {
      must(wrangler(["d1", "migrations", "apply", db.binding, "--remote", "--env", env, "--config", configFile]), `applying migrations to ${db.binding}`);
    }
    const secretsDir = mkdtempSync(join(tmpdir(), "salvo-secrets-"));
    try {
      const deployArgs = ["deploy", "--env", env, "--config", configFile];
      if (Object.keys(secrets).length > 0) {
        const file = join(secretsDir, "secrets.json");
        writeFileSync(file, JSON.stringify(secrets), { mode: 0o600 });
        deployArgs.push("--secrets-file", file);
      }
      must(wrangler(deployArgs), "wrangler deploy");
    } finally {
      rmSync(secretsDir, { recursive: true, force: true });
    }
    log(`\n  Deployed ${target.worker}. Provision the first account: POST ${target.vars.PUBLIC_URL}/admin/v1/accounts (README "Deploying").`);
  }
  if (failed) throw new Error(`${configFile} has problems (above); nothing was deployed`);
  if (options.dryRun) log(`\nDry run: nothing was created or uploaded. Deploy with: npm run deploy -- --env <${declared.join("|")}>`);
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  // The web app is part of the Worker's static assets: what is deployed is built from web/ as it is now.
  const { buildWeb } = await import("./build-web.mjs");
  await buildWeb({ quiet: true });
  main(process.argv.slice(2)).catch((error) => {
    console.error(`\n${error.message}`);
    process.exit(1);
  });
}
