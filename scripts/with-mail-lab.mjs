// `node scripts/with-mail-lab.mjs <command...>`: runs a command with the mail lab up (issue 13, item 6).
// Starts `scripts/mail-lab.mjs` on free ports unless a lab is already running (then leaves that one
// alone), waits for `.mail-lab.json`, runs the command with NODE_EXTRA_CA_CERTS naming the lab's CA
// (the Workers runtime trusts the lab's certificate only when this is set before it starts; see the
// README's "Mail lab"), MAIL_LAB_JSON, RSPAMD_URL naming the lab's Rspamd and the lab's OAuth
// provider as Salvo's settings name it (`oauth.salvo_vars`), then stops the lab it started, by its
// process id, whatever the command did.
import { spawn } from "node:child_process";
import { LAB_JSON, runningLab, startLab } from "./lib/mail-lab.mjs";

const command = process.argv.slice(2);
if (command.length === 0) {
  console.error("usage: node scripts/with-mail-lab.mjs <command...>");
  process.exit(2);
}

let lab = null;
let child = null;
let finishing = false;
async function finish(code) {
  if (finishing) return;
  finishing = true;
  if (child && child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  await lab?.stop();
  process.exit(code);
}
for (const signal of ["SIGINT", "SIGTERM"]) process.on(signal, () => finish(130));

try {
  let config = runningLab();
  if (config) {
    console.log("with-mail-lab: using the mail lab that is already running.");
  } else {
    // Free ports of its own, so a lab of another checkout (or a developer's) on the defaults is no clash.
    lab = await startLab();
    config = lab.config;
  }
  child = spawn(command[0], command.slice(1), {
    stdio: "inherit",
    env: {
      ...process.env,
      NODE_EXTRA_CA_CERTS: config.ca_file,
      MAIL_LAB_JSON: LAB_JSON,
      ...(config.rspamd ? { RSPAMD_URL: config.rspamd.url } : {}),
      ...config.oauth?.salvo_vars,
    },
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
