// `node scripts/with-mail-lab.mjs <command...>`: runs a command with the mail lab up (issue 13, item 6).
// Starts `scripts/mail-lab.mjs` unless a lab is already running (then leaves that one alone), waits for
// `.mail-lab.json`, runs the command with NODE_EXTRA_CA_CERTS naming the lab's CA (the Workers runtime
// trusts the lab's certificate only when this is set before it starts; see the README's "Mail lab")
// and RSPAMD_URL naming the lab's Rspamd,
// then stops the lab it started, by its process id, whatever the command did.
import { spawn, spawnSync } from "node:child_process";
import { freePort } from "./lib/dev-server.mjs";
import { LAB_JSON as jsonPath, runningLab } from "./lib/mail-lab.mjs";
import { existsSync, readFileSync, rmSync } from "node:fs";
import { join } from "node:path";

const root = join(import.meta.dirname, "..");
const command = process.argv.slice(2);
if (command.length === 0) {
  console.error("usage: node scripts/with-mail-lab.mjs <command...>");
  process.exit(2);
}

const PORT_VARS = ["MAIL_LAB_SMTP_PORT", "MAIL_LAB_SMTPS_PORT", "MAIL_LAB_SMTP_PLAIN_PORT", "MAIL_LAB_IMAP_PORT", "MAIL_LAB_IMAPS_PORT", "MAIL_LAB_RSPAMD_PORT"];

if (spawnSync("bash", [join(root, "scripts", "ensure-mail-lab.sh")], { stdio: "inherit" }).status !== 0) {
  console.error("with-mail-lab: could not install Postfix, Dovecot and Rspamd (scripts/ensure-mail-lab.sh).");
  process.exit(1);
}

let lab = null;
let labExited = null;
if (runningLab()) {
  console.log("with-mail-lab: using the mail lab that is already running.");
} else {
  // A file left by a lab killed hard would be read as the new lab's before it is written.
  rmSync(jsonPath, { force: true });
  // Free ports of its own, so a lab of another checkout (or a developer's) on the defaults is no clash.
  const ports = {};
  for (const name of PORT_VARS) ports[name] = process.env[name] ?? String(await freePort());
  lab = spawn(process.execPath, [join(root, "scripts", "mail-lab.mjs")], {
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, ...ports },
  });
  labExited = new Promise((resolve) => lab.on("exit", (code, signal) => resolve(signal ?? code)));
}

function stopLab() {
  if (!lab || lab.exitCode !== null || lab.signalCode !== null) return Promise.resolve();
  lab.kill("SIGTERM");
  // The lab stops its own daemons on SIGTERM; a lab that hangs is killed after its own 10 s grace.
  const hard = setTimeout(() => lab.kill("SIGKILL"), 15000);
  return labExited.then(() => clearTimeout(hard));
}

let child = null;
let finishing = false;
async function finish(code) {
  if (finishing) return;
  finishing = true;
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  await stopLab();
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => finish(130));

async function waitForLab() {
  const deadline = Date.now() + 60000;
  while (!existsSync(jsonPath)) {
    if (lab && (lab.exitCode !== null || lab.signalCode !== null)) throw new Error("the mail lab exited before it was ready");
    if (Date.now() > deadline) throw new Error("the mail lab did not write .mail-lab.json within 60 s");
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return JSON.parse(readFileSync(jsonPath, "utf8"));
}

try {
  const config = await waitForLab();
  child = spawn(command[0], command.slice(1), {
    stdio: "inherit",
    env: { ...process.env, NODE_EXTRA_CA_CERTS: config.ca_file, MAIL_LAB_JSON: jsonPath, ...(config.rspamd ? { RSPAMD_URL: config.rspamd.url } : {}) },
  });
  const code = await new Promise((resolve) => {
    child.on("error", (error) => {
      console.error(`with-mail-lab: ${error.message}`);
      resolve(1);
    });
    child.on("exit", (exitCode, signal) => resolve(exitCode ?? (signal ? 1 : 0)));
  });
  await finish(code);
} catch (error) {
  console.error(`with-mail-lab: ${error.message}`);
  await finish(1);
}
