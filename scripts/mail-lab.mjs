// `npm run mail-lab`: a real mail system on loopback for development and tests (issue 13, item 6).
// Debian's Postfix (SMTP submission, STARTTLS and implicit TLS, AUTH through Dovecot) delivers over
// LMTP into Dovecot (IMAP), which files GTUBE messages into Junk, a known share of warmup mail into
// Junk (WARMUP_JUNK_PREFIXES below) and "[promo]" subjects into the Promotions tab with Sieve rules; Debian's Rspamd answers its HTTP API (/checkv2) on loopback for
// spam-test scoring. The lab's lasting files (CA, keys, passwords) are in .mail-lab/; what the daemons
// read or write (configuration, sockets, mail, logs) is in a root-owned runtime directory under
// /var/tmp that their own users can reach wherever the checkout is (scripts/lib/mail-lab.mjs).
// Nothing in /etc or any system service is touched (Rspamd reads the package's stock rules from
// /etc/rspamd and our overrides from the runtime directory). Runs in the foreground; Ctrl-C or
// SIGTERM stops the daemons by their process ids.
import { spawn, spawnSync } from "node:child_process";
import { chownSync, copyFileSync, existsSync, lstatSync, mkdirSync, readdirSync, readFileSync, realpathSync, renameSync, rmSync, symlinkSync, unlinkSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { setInterval } from "node:timers";
import { LAB_DIR, LAB_JSON as jsonPath, LAB_PID as lockPath, RUNTIME_BASE, RUNTIME_PREFIX, alive, runtimeDirFor } from "./lib/mail-lab.mjs";
import { limitedRecipients, limitedSenders, sinkDomain, writeDovecot, writePostfix, writeRspamd } from "./lib/mail-lab-config.mjs";
import { prepareOAuth } from "./lib/mail-lab-oauth.mjs";

const root = join(import.meta.dirname, "..");
// The OAuth provider (oidc-provider) wants Node 22: the project's own, whatever Node runs this script.
const NODE = existsSync(join(root, "node_modules", ".bin", "node")) ? join(root, "node_modules", ".bin", "node") : process.execPath;
// Files the daemons read must be readable by their own users whatever umask the caller had.
process.umask(0o022);
const host = "127.0.0.1";
const DOMAIN = "lab.salvo.test";

const port = (name, fallback) => Number(process.env[name] ?? fallback);
const PORTS = {
  submission: port("MAIL_LAB_SMTP_PORT", 2587),
  submissions: port("MAIL_LAB_SMTPS_PORT", 2465),
  plain: port("MAIL_LAB_SMTP_PLAIN_PORT", 2525),
  imap: port("MAIL_LAB_IMAP_PORT", 2143),
  imaps: port("MAIL_LAB_IMAPS_PORT", 2993),
  rspamd: port("MAIL_LAB_RSPAMD_PORT", 2333),
  oauth: port("MAIL_LAB_OAUTH_PORT", 2443),
};
// MAIL_LAB_RSPAMD=off starts no Rspamd (faster: its first start compiles its rules; only spam tests need it).
const RSPAMD = process.env.MAIL_LAB_RSPAMD !== "off";
if (!RSPAMD) delete PORTS.rspamd;

// The machine's rule: lab mail is owned by nobody (and nobody's group). Postfix and Dovecot keep
// their own system users (created by the packages) for their unprivileged processes.
const MAIL_USER = "nobody";

/** The provider ids of migrations/0006_provider_catalogue.sql, in its order. */
const CATALOGUE = ["gmail", "google-workspace", "outlook", "office365", "yahoo", "aol", "icloud", "zoho", "proton", "fastmail", "comcast",
  "att", "gmx", "webde", "tonline", "orange", "libero", "seznam", "mailru", "yandex", "qq", "netease163", "naver", "rediffmail", "uol"];

const MAILBOXES = [
  ...Array.from({ length: 10 }, (_, i) => ({ local: `sender${i + 1}`, role: "sender" })),
  ...[1, 2, 3, 4, 5].map((n) => ({ local: `lead${n}`, role: "lead" })),
  // The warmup pool's lab test (test/mail/warmup.test.ts): ten mailboxes no other test reads.
  ...Array.from({ length: 10 }, (_, i) => ({ local: `warm${i + 1}`, role: "warmup" })),
  // Mailboxes connected through the lab's OAuth provider in tests (apart from the senders benchmarks take).
  ...["google", "microsoft"].map((provider) => ({ local: `oauth-${provider}`, role: "oauth" })),
  // provider ids from migrations/0006_provider_catalogue.sql; every seed has INBOX, a Promotions tab and Junk.
  ...["gmail", "outlook", "yahoo"].map((id) => ({
    local: `seed-${id}`,
    role: "seed",
    provider_id: id,
    inbox_folders: ["INBOX"],
    tab_folders: ["Promotions"],
    spam_folders: ["Junk"],
  })),
  // One seed per catalogue provider for `npm run bench:deliverability` (25 seeds read in one checker pass).
  ...CATALOGUE.map((id) => ({
    local: `bench-seed-${id}`,
    role: "bench-seed",
    provider_id: id,
    inbox_folders: ["INBOX"],
    tab_folders: ["Promotions"],
    spam_folders: ["Junk"],
  })),
];

/** The daemons' directories inside the runtime directory. */
function runtimeDirs(runtime) {
  return {
    run: join(runtime, "run"),
    // The lab's CA certificate, for daemons that check the OAuth provider's (Dovecot's auth process).
    tls: join(runtime, "tls"),
    dovecotRun: join(runtime, "run", "dovecot"),
    mail: join(runtime, "mail"),
    log: join(runtime, "log"),
    sieve: join(runtime, "sieve"),
    // Postfix's own check wants its config directory root-owned throughout, so the queue sits beside it.
    postfix: join(runtime, "postfix", "etc"),
    queue: join(runtime, "postfix", "spool"),
    data: join(runtime, "postfix", "data"),
    dovecotConf: join(runtime, "dovecot"),
    rspamd: join(runtime, "rspamd"),
    rspamdLocal: join(runtime, "rspamd", "local.d"),
    // Written by Rspamd's unprivileged workers: its compiled regex cache lives here, so only the first start is slow.
    rspamdDb: join(runtime, "rspamd", "db"),
    rspamdRun: join(runtime, "rspamd", "run"),
  };
}

function fail(message) {
  console.error(`mail-lab: ${message}`);
  process.exit(1);
}

function sh(cmd, args, options = {}) {
  const result = spawnSync(cmd, args, { encoding: "utf8", ...options });
  if (result.status !== 0) {
    fail(`${cmd} ${args.join(" ")} failed:\n${result.stdout ?? ""}${result.stderr ?? ""}${result.error ?? ""}`);
  }
  return result.stdout;
}

function portFree(p) {
  return new Promise((resolve) => {
    const server = createServer();
    server.once("error", () => resolve(false));
    server.listen(p, host, () => server.close(() => resolve(true)));
  });
}

function userId(name, flag) {
  return Number(sh("id", [flag, name]).trim());
}

/** A local CA and a server certificate for localhost / 127.0.0.1 / the lab domain, made once. */
function ensureCertificates() {
  const dir = join(LAB_DIR, "tls");
  mkdirSync(dir, { recursive: true });
  const ca = join(dir, "ca.pem");
  const caKey = join(dir, "ca-key.pem");
  const cert = join(dir, "server.pem");
  const key = join(dir, "server-key.pem");
  if (existsSync(ca) && existsSync(cert) && existsSync(key)) return { ca, cert, key };
  const ext = join(dir, "server.ext");
  writeFileSync(
    ext,
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      `subjectAltName=DNS:localhost,DNS:${DOMAIN},DNS:mail.${DOMAIN},IP:127.0.0.1`,
    ].join("\n"),
  );
  const csr = join(dir, "server.csr");
  sh("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "3650", "-subj", "/CN=Salvo mail lab local CA",
    "-addext", "basicConstraints=critical,CA:TRUE", "-addext", "keyUsage=critical,keyCertSign,cRLSign",
    "-keyout", caKey, "-out", ca]);
  sh("openssl", ["req", "-newkey", "rsa:2048", "-nodes", "-subj", `/CN=mail.${DOMAIN}`, "-keyout", key, "-out", csr]);
  sh("openssl", ["x509", "-req", "-in", csr, "-CA", ca, "-CAkey", caKey, "-CAcreateserial", "-days", "825",
    "-extfile", ext, "-out", cert]);
  rmSync(csr);
  return { ca, cert, key };
}

/**
 * Passwords are made once and kept, so .mail-lab.json stays valid across restarts; mailboxes added
 * to the list since a lab was first made get theirs now.
 */
function ensureMailboxes() {
  const path = join(LAB_DIR, "mailboxes.json");
  const known = new Map((existsSync(path) ? JSON.parse(readFileSync(path, "utf8")) : []).map((m) => [m.email, m.password]));
  const mailboxes = MAILBOXES.map(({ local, role, ...seed }) => ({
    email: `${local}@${DOMAIN}`,
    password: known.get(`${local}@${DOMAIN}`) ?? `lab-${local}-${Math.random().toString(36).slice(2, 10)}`,
    role,
    ...seed,
  }));
  writeFileSync(path, `${JSON.stringify(mailboxes, null, 2)}\n`, { mode: 0o600 });
  return mailboxes;
}

/** Rspamd answers /ping once its rules are loaded (the first start compiles its regex cache: allow for it). */
async function waitForRspamd(timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const answer = await fetch(`http://${host}:${PORTS.rspamd}/ping`).then((r) => r.text(), () => "");
    if (answer.trim() === "pong") return;
    if (Date.now() > deadline) throw new Error(`rspamd did not answer /ping on ${host}:${PORTS.rspamd}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** Connects rather than binds: a probe that binds could take the port just as a daemon wants it. */
function waitForPort(p, timeoutMs) {
  const deadline = Date.now() + timeoutMs;
  return new Promise((resolve, reject) => {
    const attempt = () => {
      const socket = connect(p, host, () => {
        socket.destroy();
        resolve();
      });
      socket.once("error", () => {
        socket.destroy();
        if (Date.now() > deadline) reject(new Error(`nothing is listening on ${host}:${p}`));
        else setTimeout(attempt, 100);
      });
    };
    attempt();
  });
}

/**
 * Makes (or takes back) this lab's runtime directory. Its name is predictable and /var/tmp is open to
 * every user, so a directory found there is used only if it is a real directory (not a link), owned
 * by root, writable by root alone and made for this lab directory; anything else stops the lab.
 */
function ensureRuntimeDir() {
  const runtime = runtimeDirFor(LAB_DIR);
  try {
    mkdirSync(runtime, { mode: 0o755 });
  } catch (error) {
    if (error.code !== "EEXIST") throw error;
  }
  const found = lstatSync(runtime);
  if (!found.isDirectory() || found.uid !== 0 || (found.mode & 0o022) !== 0) {
    fail(`${runtime} is not a directory owned by root and writable by root alone (another user may have made it): remove it and start again.`);
  }
  const ownerFile = join(runtime, "owner");
  const owner = existsSync(ownerFile) ? readFileSync(ownerFile, "utf8") : null;
  const labDir = realpathSync(LAB_DIR);
  if (owner !== null && owner !== labDir) fail(`${runtime} belongs to the lab of ${owner}; remove it and start again.`);
  writeFileSync(ownerFile, labDir);
  return runtime;
}

/** Removes runtime directories whose lab directory is gone (a deleted checkout or a test's lab), unless their lab still runs. */
function removeOrphans(own) {
  for (const name of readdirSync(RUNTIME_BASE)) {
    const dir = join(RUNTIME_BASE, name);
    if (!name.startsWith(RUNTIME_PREFIX) || dir === own) continue;
    const found = lstatSync(dir, { throwIfNoEntry: false });
    if (!found?.isDirectory() || found.uid !== 0) continue;
    const owner = existsSync(join(dir, "owner")) ? readFileSync(join(dir, "owner"), "utf8") : null;
    const pid = existsSync(join(dir, "lab.pid")) ? Number(readFileSync(join(dir, "lab.pid"), "utf8")) : 0;
    if (owner === null || existsSync(owner) || (pid > 0 && alive(pid))) continue;
    rmSync(dir, { recursive: true, force: true });
  }
}

if (process.getuid?.() !== 0) fail("run as root: Postfix and Dovecot start as root and drop privileges themselves.");
// Installed from here rather than chained in package.json, so that npm's SIGTERM reaches this process.
if (spawnSync("bash", [join(root, "scripts", "ensure-mail-lab.sh")], { stdio: "inherit" }).status !== 0) {
  fail("could not install Postfix, Dovecot and Rspamd (scripts/ensure-mail-lab.sh).");
}
// Holds the CA's key and the passwords: root's alone.
mkdirSync(LAB_DIR, { recursive: true, mode: 0o700 });
if (existsSync(lockPath)) {
  const pid = Number(readFileSync(lockPath, "utf8"));
  if (pid && alive(pid)) fail(`already running (pid ${pid}); stop it first (Ctrl-C there, or kill ${pid}).`);
}
const runtime = ensureRuntimeDir();
const dirs = runtimeDirs(runtime);
for (const [name, p] of Object.entries(PORTS)) {
  if (!(await portFree(p))) {
    fail(
      `port ${host}:${p} (${name}) is in use; set MAIL_LAB_*_PORT to choose another. If a lab was killed ` +
        `hard, its daemons may still run: see ${dirs.dovecotRun}/master.pid and ${dirs.queue}/pid/master.pid.`,
    );
  }
}
writeFileSync(lockPath, String(process.pid));
writeFileSync(join(runtime, "lab.pid"), String(process.pid));
process.on("exit", () => {
  if (existsSync(lockPath) && readFileSync(lockPath, "utf8") === String(process.pid)) rmSync(lockPath, { force: true });
});
removeOrphans(runtime);
// Labs before the runtime directory kept the daemons' files in .mail-lab/ itself.
for (const old of ["run", "mail", "log", "sieve", "postfix", "dovecot", "rspamd"]) rmSync(join(LAB_DIR, old), { recursive: true, force: true });
for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
// For people: the checkout's .mail-lab/runtime leads to the logs and the mail.
const link = join(LAB_DIR, "runtime");
if (lstatSync(link, { throwIfNoEntry: false })?.isSymbolicLink()) unlinkSync(link);
if (!existsSync(link)) symlinkSync(runtime, link);

const uid = userId(MAIL_USER, "-u");
const gid = userId(MAIL_USER, "-g");
chownSync(dirs.mail, uid, gid);
chownSync(dirs.data, userId("postfix", "-u"), userId("postfix", "-g"));
const tls = ensureCertificates();
const mailboxes = ensureMailboxes();
const caForDaemons = join(dirs.tls, "ca.pem");
copyFileSync(tls.ca, caForDaemons);
let oauth;
try {
  oauth = prepareOAuth({ labDir: LAB_DIR, host, port: PORTS.oauth, domain: DOMAIN, mailboxes, tls, caForDaemons, logDir: dirs.log, ports: PORTS });
} catch (error) {
  fail(error.message);
}
const lab = { host, domain: DOMAIN, ports: PORTS, dirs, tls, mailboxes, uid, gid, dovecotGid: userId("dovecot", "-g"), instance: runtime.slice(RUNTIME_BASE.length + 1), oauth: oauth.dovecot };
try {
  writeDovecot(lab);
  writePostfix(lab);
  if (RSPAMD) writeRspamd(lab);
} catch (error) {
  fail(error.message);
}
// Creates the queue's subdirectories with Postfix's own owners and modes, and checks the config.
sh("/usr/sbin/postfix", ["-c", dirs.postfix, "check"]);

const children = [];
let stopping = false;

function stop(code) {
  if (stopping) return;
  stopping = true;
  for (const child of children) {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
  }
  const deadline = Date.now() + 10000;
  const done = () => {
    if (Date.now() > deadline) {
      for (const child of children) child.kill("SIGKILL");
    }
    if (children.every((child) => child.exitCode !== null || child.signalCode !== null)) {
      rmSync(lockPath, { force: true });
      rmSync(jsonPath, { force: true });
      console.log("mail-lab: stopped.");
      process.exit(code);
    }
    setTimeout(done, 100);
  };
  done();
}

function start(name, cmd, args) {
  const child = spawn(cmd, args, {
    // Own process group: a terminal Ctrl-C reaches only this script, which then stops each daemon in turn.
    detached: true,
    stdio: ["ignore", "inherit", "inherit"],
    env: { ...process.env, MAIL_CONFIG: dirs.postfix },
  });
  child.on("exit", (code, signal) => {
    if (!stopping) {
      console.error(`mail-lab: ${name} exited (${signal ?? code}); see ${dirs.log}`);
      stop(1);
    }
  });
  children.push(child);
  return child;
}

process.on("SIGINT", () => stop(0));
process.on("SIGTERM", () => stop(0));
// npm run passes SIGTERM to its shell, not to this script: when the parent goes away, so does the lab.
const parent = process.ppid;
setInterval(() => {
  if (process.ppid !== parent) stop(0);
}, 500).unref();

const dovecot = start("dovecot", "/usr/sbin/dovecot", ["-F", "-c", join(dirs.dovecotConf, "dovecot.conf")]);
const postfix = start("postfix", "/usr/lib/postfix/sbin/master", ["-d", "-c", dirs.postfix]);
const rspamd = RSPAMD
  ? start("rspamd", "/usr/bin/rspamd", [
      "-f", "-u", MAIL_USER, "-g", sh("id", ["-gn", MAIL_USER]).trim(), "-c", join(dirs.rspamd, "rspamd.conf"),
      `--var=LOCAL_CONFDIR=${dirs.rspamd}`, `--var=DBDIR=${dirs.rspamdDb}`, `--var=RUNDIR=${dirs.rspamdRun}`, `--var=LOGDIR=${dirs.log}`,
    ])
  : null;

const provider = start("oauth", NODE, [join(root, "scripts", "mail-lab-oauth.mjs"), oauth.providerConfig]);

const { rspamd: rspamdPort, ...mailPorts } = PORTS;
const ready = await Promise.all([...Object.values(mailPorts).map((p) => waitForPort(p, 15000)), ...(RSPAMD ? [waitForRspamd(120000)] : [])]).then(
  () => true,
  (error) => {
    console.error(`mail-lab: ${error.message}; see ${dirs.log}`);
    stop(1);
    return false;
  },
);
if (ready && !stopping) announce();

function announce() {
  const config = {
    smtp: { host, port: PORTS.submission, security: "starttls" },
    imap: { host, port: PORTS.imap, security: "starttls" },
    // Other doors onto the same lab: implicit TLS for both, and a loopback-only plaintext submission port
    // for runtimes that cannot be told to trust the lab's CA (see the README's "Mail lab" section).
    smtp_tls: { host, port: PORTS.submissions, security: "tls" },
    smtp_plain: { host, port: PORTS.plain, security: "plain" },
    imap_tls: { host, port: PORTS.imaps, security: "tls" },
    ...(RSPAMD ? { rspamd: { url: `http://${host}:${rspamdPort}` } } : {}),
    ca_file: tls.ca,
    // Any address here is taken on the same ports and discarded after queueing (the benchmarks' peer comparison).
    sink_domain: sinkDomain(DOMAIN),
    // Senders Postfix refuses as providers' sending limits do: 421 and a hang-up, or Gmail's daily limit.
    limited_senders: Object.fromEntries(Object.entries(limitedSenders(DOMAIN)).map(([name, { email }]) => [name, email])),
    // A recipient Postfix refuses as a provider throttling mail to its users does: 421 and a hang-up.
    limited_recipients: Object.fromEntries(Object.entries(limitedRecipients(DOMAIN)).map(([name, { email }]) => [name, email])),
    // Where the daemons keep their files: mail as Maildirs (<mail_dir>/<domain>/<local part>/Maildir), and their logs.
    runtime_dir: runtime,
    mail_dir: dirs.mail,
    logs: {
      postfix: join(dirs.log, "postfix.log"),
      dovecot: join(dirs.log, "dovecot.log"),
      ...(RSPAMD ? { rspamd: join(dirs.log, "rspamd.log") } : {}),
      oauth: oauth.log,
    },
    mailboxes,
    // The lab's OAuth 2.0 / OpenID Connect provider; Dovecot (IMAP, and Postfix's submission through it) accepts its access tokens with XOAUTH2 and OAUTHBEARER.
    oauth: oauth.published,
  };
  // Written whole, then renamed into place: the clients poll for this file and read it as soon as it
  // exists, and a file written in place can be seen empty (the CI of 6124503 read it so).
  const whole = `${jsonPath}.${process.pid}`;
  writeFileSync(whole, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  renameSync(whole, jsonPath);

  // Nested templates named first: the banner below stays one template of plain lines.
  const rspamdProcess = rspamd ? `Rspamd pid ${rspamd.pid}` : "no Rspamd";
  const rspamdUrl = RSPAMD ? `http://${host}:${rspamdPort}/checkv2   (RSPAMD_URL)` : "off (MAIL_LAB_RSPAMD=off)";
  const apps = Object.values(oauth.published.clients).map((c) => c.client_id).join(", ");
  const seeds = mailboxes.filter((m) => m.role === "seed").map((m) => `${m.email.split("@")[0]} (${m.provider_id})`).join(", ");
  const users = mailboxes.map((m) => m.email.split("@")[0]).join(", ");
  console.log(`
  Salvo mail lab is running (Postfix pid ${postfix.pid}, Dovecot pid ${dovecot.pid}, ${rspamdProcess}, OAuth provider pid ${provider.pid}). Ctrl-C stops it.
  SMTP submission  ${host}:${PORTS.submission} STARTTLS + AUTH   (implicit TLS ${PORTS.submissions}, plaintext ${PORTS.plain})
  IMAP             ${host}:${PORTS.imap} STARTTLS          (implicit TLS ${PORTS.imaps})
  Rspamd           ${rspamdUrl}
  OAuth provider   ${oauth.published.issuer} (OpenID Connect; users: every lab address, one password; apps ${apps})
  SMTP/IMAP AUTH   PLAIN, LOGIN, and XOAUTH2 / OAUTHBEARER with the provider's access tokens
  Seeds            ${seeds}: INBOX, Promotions (tab), Junk (spam)
  Domain           ${DOMAIN}: ${users}
  Accounts         ${jsonPath}     Local CA  ${tls.ca}
  Runtime          ${runtime} (also ${link})
  Logs             ${dirs.log}/: postfix.log, dovecot.log (each login's mechanism), oauth.log
  Check it         npm run mail-lab:check
  `);
}
