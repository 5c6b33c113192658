// `npm run dev`: prepare local secrets, migrate the local D1 database, seed the demo account, then serve.
// With the mail lab running (npm run mail-lab), the Worker trusts the lab's CA and the demo account
// gets a demo mailbox in the lab, so a demo campaign really sends. A lab started later (or started
// again with another CA or Rspamd) is noticed: the Worker is restarted on the same port and local
// state with the lab's CA in NODE_EXTRA_CA_CERTS, which workerd reads only when it starts.
import { spawn, spawnSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { connect } from "node:net";
import { dirname, join } from "node:path";
import { setInterval } from "node:timers";
import { runningLab } from "./lib/mail-lab.mjs";
import { seedDemoAccount } from "./seed.mjs";
import { buildWeb, webIsStale } from "./build-web.mjs";

const root = join(import.meta.dirname, "..");
const wrangler = join(root, "node_modules", ".bin", "wrangler");
const port = process.env.PORT ?? "8787";
// SALVO_STATE_DIR keeps D1, Durable Object and queue state apart from the default .wrangler/state,
// so tests and benchmarks can run a throwaway instance beside a developer's own.
const persist = process.env.SALVO_STATE_DIR ? ["--persist-to", process.env.SALVO_STATE_DIR] : [];
const origin = `http://127.0.0.1:${port}`;
// SALVO_MAIL_LAB=off serves without the lab even while one runs (throwaway instances of the tests).
const labOff = process.env.SALVO_MAIL_LAB === "off";
const lab = labOff ? null : runningLab();
const DEMO_SENDER = "sender1@lab.salvo.test";
const HEALTH_TIMEOUT_MS = 120_000;
const CHECK_TIMEOUT_MS = 20_000;
const LAB_POLL_MS = 1000;

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
// The web app at / is built from web/ (postinstall builds it; a change since then is built here).
if (webIsStale()) await buildWeb({ quiet: true });
// Both shards and the directory (wrangler.toml); the demo account lives on shard 0.
for (const binding of ["DB", "DB_1", "DIRECTORY"]) run(["d1", "migrations", "apply", binding, "--local"]);
const apiKey = await seedDemoAccount(run);

const portPrefix = port === "8787" ? "" : `PORT=${port} `;
console.log(`
  Salvo is starting on ${origin}
  Demo account: demo@salvo.local
  Demo account API key: ${apiKey}
  Try: curl -H "X-API-Key: ${apiKey}" ${origin}/api/v1/account
`);
if (lab) {
  console.log(`  Mail lab found: the demo account gets a lab mailbox (${DEMO_SENDER}) once the server answers.\n`);
} else if (labOff) {
  console.log('  No mail lab (SALVO_MAIL_LAB=off): campaigns report sending_status "no_mailboxes".\n');
} else {
  console.log(
    '  No mail lab: campaigns report sending_status "no_mailboxes". To send for real, run `npm run mail-lab` in another terminal: this server notices it and restarts its Worker to use it.\n',
  );
}

// A second instance (tests, benchmarks) must not fight the first over the devtools port.
const inspector = process.env.INSPECTOR_PORT ? ["--inspector-port", process.env.INSPECTOR_PORT] : [];
// Tracking and unsubscribe links in the mail sent must point at this server (.dev.vars names :8787).
const publicUrl = port === "8787" ? [] : ["--var", `PUBLIC_URL:${origin}`];
// Vars for one run over .dev.vars (a benchmark's setting): SALVO_DEV_VARS="NAME=value,NAME=value".
const runVars = (process.env.SALVO_DEV_VARS ?? "").split(",").filter(Boolean).flatMap((pair) => ["--var", pair.replace("=", ":")]);
// wrangler dev's local trace and log store (<state>/v3/observability) records every request's full
// URL and ignores redact_query_string, so an api_key in a query string would be kept there. It
// stays off unless SALVO_LOCAL_OBSERVABILITY=true (then send keys in the X-API-Key header).
const localObservability = process.env.SALVO_LOCAL_OBSERVABILITY === "true" ? "true" : "false";

/** What the Worker takes from the lab when it starts: a lab that differs in these needs a restart. */
function labTerms(config) {
  return config ? JSON.stringify([readFileSync(config.ca_file, "utf8"), config.rspamd?.url ?? null, config.oauth?.salvo_vars ?? null]) : null;
}

let server = null;
let servedTerms = null;
let restarting = false;
let stopping = false;

/** Starts `wrangler dev`, trusting the lab's CA and using its Rspamd and OAuth provider when a lab is given. */
function serve(config) {
  // The lab's Rspamd scores spam tests (RSPAMD_URL) and its OAuth provider stands for Google's and
  // Microsoft's (CONTRACT 18.1's settings), unless .dev.vars names its own.
  const devVars = readFileSync(join(root, ".dev.vars"), "utf8");
  const fromLab = { ...(config?.rspamd ? { RSPAMD_URL: config.rspamd.url } : {}), ...config?.oauth?.salvo_vars };
  const labVars = Object.entries(fromLab)
    .filter(([name]) => !new RegExp(`^${name}=\\S`, "m").test(devVars))
    .flatMap(([name, value]) => ["--var", `${name}:${value}`]);
  const labCa = config ? { NODE_EXTRA_CA_CERTS: extraCaWithLab(config.ca_file) } : {};
  servedTerms = labTerms(config);
  server = spawn(wrangler, ["dev", "--ip", "127.0.0.1", "--port", port, "--test-scheduled", ...publicUrl, ...runVars, ...labVars, ...inspector, ...persist], {
    cwd: root,
    stdio: "inherit",
    env: { ...process.env, ...labCa, X_LOCAL_OBSERVABILITY: localObservability },
  });
  server.on("exit", (code) => {
    if (!restarting || stopping) process.exit(code ?? 0);
  });
}

/** Resolves once nothing accepts connections on the server's port (the old workerd is gone). */
async function portReleased() {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  for (;;) {
    const open = await new Promise((resolve) => {
      const socket = connect(Number(port), "127.0.0.1", () => {
        socket.destroy();
        resolve(true);
      });
      socket.once("error", () => resolve(false));
    });
    if (!open || Date.now() > deadline) return;
    await sleep(200);
  }
}

/** Stops wrangler (SIGTERM, then SIGKILL after 10 s) and starts it again for this lab: same port, same state directory. */
async function restartFor(config) {
  restarting = true;
  const old = server;
  const exited = new Promise((resolve) => (old.exitCode !== null || old.signalCode !== null ? resolve() : old.once("exit", resolve)));
  old.kill("SIGTERM");
  const killer = setTimeout(() => old.kill("SIGKILL"), 10_000);
  await exited;
  clearTimeout(killer);
  await portReleased();
  restarting = false;
  if (stopping) process.exit(0);
  serve(config);
}

/**
 * Every second: a running lab whose CA or Rspamd the Worker was not started with restarts it, then
 * the demo mailbox is saved for that lab. A lab that stops changes nothing (its CA stays trusted).
 */
function watchLab() {
  let busy = false;
  let mailboxFor = lab ? JSON.stringify([lab.smtp, lab.imap]) : null;
  setInterval(async () => {
    if (busy) return;
    busy = true;
    try {
      let config = null;
      let terms = null;
      try {
        config = runningLab();
        terms = labTerms(config);
      } catch {
        // .mail-lab.json half written, or the lab going away: look again on the next round
      }
      if (!config) return;
      if (terms !== servedTerms) {
        console.log(`\n  Mail lab found (${config.smtp.host}:${config.smtp.port}): restarting the Worker to trust its CA (same port, same local state).\n`);
        await restartFor(config);
      }
      const mailbox = JSON.stringify([config.smtp, config.imap]);
      if (mailbox !== mailboxFor) {
        mailboxFor = mailbox;
        await setUpDemoMailbox(config).catch((error) => console.log(`\n  Mail lab: setting up the demo mailbox failed: ${error.message}\n`));
      }
    } finally {
      busy = false;
    }
  }, LAB_POLL_MS);
}

serve(lab);
for (const signal of ["SIGINT", "SIGTERM"]) {
  process.on(signal, () => {
    stopping = true;
    if (server.exitCode === null && server.signalCode === null) server.kill(signal);
    else if (!restarting) process.exit(0);
  });
}

/**
 * workerd trusts the lab's certificate only when miniflare finds its CA in NODE_EXTRA_CA_CERTS at
 * start (README "Mail lab"). A file the environment already names (some machines name the system
 * bundle) is kept: the Worker gets a copy of it with the lab's CA added.
 */
function extraCaWithLab(labCaFile) {
  const given = process.env.NODE_EXTRA_CA_CERTS;
  if (!given || given === labCaFile) return labCaFile;
  const labPem = readFileSync(labCaFile, "utf8");
  const givenPem = existsSync(given) ? readFileSync(given, "utf8") : "";
  if (givenPem.includes(labPem.trim())) return given;
  const combined = join(root, ".wrangler", "mail-lab-ca.pem");
  mkdirSync(dirname(combined), { recursive: true });
  writeFileSync(combined, `${givenPem.trimEnd()}\n${labPem}`);
  console.log(`  NODE_EXTRA_CA_CERTS names ${given}: the Worker gets it with the lab's CA added (${combined}).\n`);
  return combined;
}

function sleep(ms) {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

async function api(path, init = {}) {
  const response = await fetch(`${origin}${path}`, {
    ...init,
    headers: { "X-API-Key": apiKey, ...(init.body ? { "Content-Type": "application/json" } : {}) },
  });
  return { status: response.status, body: await response.json().catch(() => null) };
}

async function waitForHealth() {
  const deadline = Date.now() + HEALTH_TIMEOUT_MS;
  while (Date.now() < deadline) {
    try {
      if ((await fetch(`${origin}/health`)).ok) return true;
    } catch {
      // not listening yet
    }
    await sleep(500);
  }
  return false;
}

/** Saves the lab's sender1 as the demo account's mailbox (saving an address again updates it) and reports its check. */
async function setUpDemoMailbox(config) {
  const sender = config.mailboxes.find((m) => m.email === DEMO_SENDER);
  if (!sender) return console.log(`\n  Mail lab: ${DEMO_SENDER} is not in .mail-lab.json; no demo mailbox.\n`);
  if (!(await waitForHealth())) return console.log(`\n  Mail lab: ${origin}/health did not answer; no demo mailbox.\n`);
  const saved = await api("/api/v1/email-accounts/save", {
    method: "POST",
    body: JSON.stringify({
      from_name: "Salvo Demo",
      from_email: sender.email,
      password: sender.password,
      smtp_host: config.smtp.host,
      smtp_port: config.smtp.port,
      smtp_port_type: "STARTTLS",
      imap_host: config.imap.host,
      imap_port: config.imap.port,
      imap_port_type: "STARTTLS",
      time_to_wait_in_mins: 0,
    }),
  });
  if (saved.status !== 200) {
    return console.log(`\n  Mail lab: saving the demo mailbox answered ${saved.status} ${JSON.stringify(saved.body)} (is ALLOW_LOCAL_MAIL_HOSTS=true in .dev.vars?)\n`);
  }
  const id = saved.body.id;
  let mailbox = saved.body.data;
  for (const deadline = Date.now() + CHECK_TIMEOUT_MS; mailbox.is_smtp_success === null && Date.now() < deadline; ) {
    await sleep(1000);
    mailbox = (await api(`/api/v1/email-accounts/${id}`)).body ?? mailbox;
  }
  const check =
    mailbox.is_smtp_success === true
      ? "its SMTP login check passed"
      : mailbox.is_smtp_success === false
        ? `its SMTP login check FAILED: ${mailbox.smtp_failure_error} (see the README's "Mail lab")`
        : "its SMTP login check has not finished yet";
  const suspended = mailbox.is_suspended
    ? `\n  It is suspended (${mailbox.smtp_failure_error ?? "by hand"}): DELETE /api/v1/email-accounts/unsuspend/${id} lets it send again.`
    : "";
  console.log(`
  Mail lab: the demo account's mailbox is ${sender.email}, email account id ${id}; ${check}.${suspended}
  Start a demo campaign (three lab leads, two steps, one email a minute):
    ${portPrefix}npm run demo:campaign
  Read what was sent (lead1..lead3; --show N prints message N raw):
    npm run mail-lab:inbox -- lead1@lab.salvo.test
`);
}

if (lab) {
  await setUpDemoMailbox(lab).catch((error) => console.log(`\n  Mail lab: setting up the demo mailbox failed: ${error.message}\n`));
}
if (!labOff) watchLab();
