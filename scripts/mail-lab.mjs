// `npm run mail-lab`: a real mail system on loopback for development and tests (issue 13, item 6).
// Debian's Postfix (SMTP submission, STARTTLS and implicit TLS, AUTH through Dovecot) delivers over
// LMTP into Dovecot (IMAP), which files GTUBE messages into Junk and "[promo]" subjects into the
// Promotions tab with Sieve rules; Debian's Rspamd answers its HTTP API (/checkv2) on loopback for
// spam-test scoring. Everything the daemons read or write lives under .mail-lab/; nothing in /etc or
// any system service is touched (Rspamd reads the package's stock rules from /etc/rspamd and our
// overrides from .mail-lab/rspamd). Runs in the foreground; Ctrl-C or SIGTERM stops the daemons by
// their process ids.
import { spawn, spawnSync } from "node:child_process";
import { chownSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { connect, createServer } from "node:net";
import { join } from "node:path";
import { setInterval } from "node:timers";
import { alive } from "./lib/mail-lab.mjs";

const root = join(import.meta.dirname, "..");
const state = join(root, ".mail-lab");
const jsonPath = join(root, ".mail-lab.json");
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
};

// The machine's rule: lab mail is owned by nobody (and nobody's group). Postfix and Dovecot keep
// their own system users (created by the packages) for their unprivileged processes.
const MAIL_USER = "nobody";
const GTUBE = "XJS*C4JDBQADN1.NSBN3*2IDNEN*GTUBE-STANDARD-ANTI-UBE-TEST-EMAIL*C.34X";
/** A subject carrying this lands in the seeds' Promotions folder: the lab's stand-in for a provider's tab. */
const PROMO_MARK = "[promo]";

/** The provider ids of migrations/0006_provider_catalogue.sql, in its order. */
const CATALOGUE = ["gmail", "google-workspace", "outlook", "office365", "yahoo", "aol", "icloud", "zoho", "proton", "fastmail", "comcast",
  "att", "gmx", "webde", "tonline", "orange", "libero", "seznam", "mailru", "yandex", "qq", "netease163", "naver", "rediffmail", "uol"];

const MAILBOXES = [
  ...Array.from({ length: 10 }, (_, i) => ({ local: `sender${i + 1}`, role: "sender" })),
  ...[1, 2, 3, 4, 5].map((n) => ({ local: `lead${n}`, role: "lead" })),
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

const dirs = {
  run: join(state, "run"),
  dovecotRun: join(state, "run", "dovecot"),
  tls: join(state, "tls"),
  mail: join(state, "mail"),
  log: join(state, "log"),
  sieve: join(state, "sieve"),
  // Postfix's own check wants its config directory root-owned throughout, so the queue sits beside it.
  postfix: join(state, "postfix", "etc"),
  queue: join(state, "postfix", "spool"),
  data: join(state, "postfix", "data"),
  dovecotConf: join(state, "dovecot"),
  rspamd: join(state, "rspamd"),
  rspamdLocal: join(state, "rspamd", "local.d"),
  // Written by Rspamd's unprivileged workers: its compiled regex cache lives here, so only the first start is slow.
  rspamdDb: join(state, "rspamd", "db"),
  rspamdRun: join(state, "rspamd", "run"),
};
const lockPath = join(state, "lab.pid");

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
  const ca = join(dirs.tls, "ca.pem");
  const caKey = join(dirs.tls, "ca-key.pem");
  const cert = join(dirs.tls, "server.pem");
  const key = join(dirs.tls, "server-key.pem");
  if (existsSync(ca) && existsSync(cert) && existsSync(key)) return { ca, cert, key };
  const ext = join(dirs.tls, "server.ext");
  writeFileSync(
    ext,
    [
      "basicConstraints=critical,CA:FALSE",
      "keyUsage=critical,digitalSignature,keyEncipherment",
      "extendedKeyUsage=serverAuth",
      `subjectAltName=DNS:localhost,DNS:${DOMAIN},DNS:mail.${DOMAIN},IP:127.0.0.1`,
    ].join("\n"),
  );
  const csr = join(dirs.tls, "server.csr");
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
  const path = join(state, "mailboxes.json");
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

function writeDovecot(tls, mailboxes, uid, gid) {
  const users = join(dirs.dovecotConf, "users");
  writeFileSync(users, mailboxes.map((m) => `${m.email}:{PLAIN}${m.password}:${uid}:${gid}::${join(dirs.mail, ...m.email.split("@").reverse())}\n`).join(""), { mode: 0o640 });
  // Read by Dovecot's unprivileged auth process; passwords are plain because the lab publishes them anyway.
  chownSync(users, 0, userId("dovecot", "-g"));
  const sieve = join(dirs.sieve, "gtube.sieve");
  writeFileSync(
    sieve,
    `require ["fileinto", "mailbox", "body"];
# GTUBE anywhere in the subject or the raw body is the lab's stand-in for "the provider's spam filter".
if anyof (header :contains "subject" "${GTUBE}", body :raw :contains "${GTUBE}") {
  fileinto :create "Junk";
  stop;
}
# A seed's tab (Gmail's Promotions and the like): a subject marked "${PROMO_MARK}".
if header :contains "subject" "${PROMO_MARK}" {
  fileinto :create "Promotions";
  stop;
}
`,
  );
  const conf = `# Generated by scripts/mail-lab.mjs; rewritten on every start.
base_dir = ${dirs.dovecotRun}
state_dir = ${join(dirs.dovecotRun, "state")}
instance_name = salvo-mail-lab
protocols = imap lmtp
listen = ${host}
log_path = ${join(dirs.log, "dovecot.log")}
info_log_path = ${join(dirs.log, "dovecot.log")}
ssl = yes
ssl_cert = <${tls.cert}
ssl_key = <${tls.key}
ssl_min_protocol = TLSv1.2
disable_plaintext_auth = no
auth_mechanisms = plain login
recipient_delimiter = +
first_valid_uid = ${uid}
last_valid_uid = ${uid}
first_valid_gid = ${gid}
mail_location = maildir:~/Maildir
mail_plugins = $mail_plugins
passdb {
  driver = passwd-file
  args = scheme=PLAIN username_format=%u ${users}
}
userdb {
  driver = passwd-file
  args = username_format=%u ${users}
}
namespace inbox {
  inbox = yes
  separator = /
  mailbox Junk {
    auto = subscribe
    special_use = \\Junk
  }
  mailbox Sent {
    auto = subscribe
    special_use = \\Sent
  }
  mailbox Promotions {
    auto = subscribe
  }
}
service imap-login {
  inet_listener imap {
    address = ${host}
    port = ${PORTS.imap}
  }
  inet_listener imaps {
    address = ${host}
    port = ${PORTS.imaps}
    ssl = yes
  }
}
service lmtp {
  unix_listener lmtp {
    mode = 0666
  }
}
service auth {
  unix_listener auth-postfix {
    mode = 0666
  }
}
protocol lmtp {
  mail_plugins = $mail_plugins sieve
  postmaster_address = postmaster@${DOMAIN}
}
plugin {
  sieve_before = ${sieve}
  sieve = file:~/sieve;active=~/.dovecot.sieve
}
`;
  const confPath = join(dirs.dovecotConf, "dovecot.conf");
  writeFileSync(confPath, conf);
  // Compiled here (as root) because delivery runs as nobody, who may not write beside the script.
  sh("sievec", ["-c", confPath, sieve]);
}

function writePostfix(tls, mailboxes) {
  const vmailbox = join(dirs.postfix, "vmailbox");
  writeFileSync(vmailbox, mailboxes.map((m) => `${m.email} ok\n`).join(""));
  const main = `# Generated by scripts/mail-lab.mjs; rewritten on every start.
compatibility_level = 3.6
queue_directory = ${dirs.queue}
data_directory = ${dirs.data}
command_directory = /usr/sbin
daemon_directory = /usr/lib/postfix/sbin
shlib_directory = /usr/lib/postfix
meta_directory = /etc/postfix
mail_owner = postfix
setgid_group = postdrop
maillog_file_prefixes = ${dirs.log}
maillog_file = ${join(dirs.log, "postfix.log")}
myhostname = mail.${DOMAIN}
mydomain = ${DOMAIN}
myorigin = ${DOMAIN}
mydestination =
local_transport = error:the mail lab has no local users
inet_interfaces = ${host}
inet_protocols = ipv4
mynetworks = 127.0.0.0/8
smtp_dns_support_level = disabled
disable_dns_lookups = yes
alias_maps =
alias_database =
biff = no
virtual_mailbox_domains = ${DOMAIN}
virtual_mailbox_maps = texthash:${vmailbox}
# lead1+anything@ lands in lead1's INBOX: benchmarks address thousands of leads with five mailboxes.
recipient_delimiter = +
virtual_transport = lmtp:unix:${join(dirs.dovecotRun, "lmtp")}
# The lab never sends mail out: relaying is refused at RCPT time (554) and anything that slips through
# is bounced, never handed to a real network.
default_transport = error:the mail lab delivers only to ${DOMAIN}
relay_transport = error:the mail lab delivers only to ${DOMAIN}
smtpd_relay_restrictions = reject_unauth_destination
smtpd_recipient_restrictions = reject_unlisted_recipient
smtpd_sasl_type = dovecot
smtpd_sasl_path = ${join(dirs.dovecotRun, "auth-postfix")}
smtpd_sasl_auth_enable = no
smtpd_tls_cert_file = ${tls.cert}
smtpd_tls_key_file = ${tls.key}
smtpd_tls_security_level = may
smtpd_tls_auth_only = yes
smtpd_tls_mandatory_protocols = >=TLSv1.2
smtpd_tls_protocols = >=TLSv1.2
smtpd_tls_loglevel = 0
message_size_limit = 26214400
`;
  const submission = (options) =>
    [
      "smtpd",
      "-o syslog_name=postfix/$service_name",
      "-o smtpd_sasl_auth_enable=yes",
      "-o smtpd_client_restrictions=permit_sasl_authenticated,reject",
      "-o smtpd_relay_restrictions=reject_unauth_destination",
      "-o smtpd_recipient_restrictions=reject_unlisted_recipient,permit_sasl_authenticated,reject",
      ...options,
    ].join("\n  ");
  const master = `# Generated by scripts/mail-lab.mjs; rewritten on every start. No chroot, no port 25.
${host}:${PORTS.submission} inet n - n - - ${submission(["-o smtpd_tls_security_level=encrypt"])}
${host}:${PORTS.submissions} inet n - n - - ${submission(["-o smtpd_tls_wrappermode=yes"])}
${host}:${PORTS.plain} inet n - n - - ${submission(["-o smtpd_tls_security_level=none", "-o smtpd_tls_auth_only=no"])}
pickup    unix  n       -       n       60      1       pickup
cleanup   unix  n       -       n       -       0       cleanup
qmgr      unix  n       -       n       300     1       qmgr
tlsmgr    unix  -       -       n       1000?   1       tlsmgr
rewrite   unix  -       -       n       -       -       trivial-rewrite
bounce    unix  -       -       n       -       0       bounce
defer     unix  -       -       n       -       0       bounce
trace     unix  -       -       n       -       0       bounce
verify    unix  -       -       n       -       1       verify
flush     unix  n       -       n       1000?   0       flush
proxymap  unix  -       -       n       -       -       proxymap
proxywrite unix -       -       n       -       1       proxymap
smtp      unix  -       -       n       -       -       smtp
relay     unix  -       -       n       -       -       smtp
showq     unix  n       -       n       -       -       showq
error     unix  -       -       n       -       -       error
retry     unix  -       -       n       -       -       error
discard   unix  -       -       n       -       -       discard
lmtp      unix  -       -       n       -       -       lmtp
anvil     unix  -       -       n       -       1       anvil
scache    unix  -       -       n       -       1       scache
postlog   unix-dgram n  -       n       -       1       postlogd
`;
  writeFileSync(join(dirs.postfix, "main.cf"), main);
  writeFileSync(join(dirs.postfix, "master.cf"), master);
}

/** Rspamd modules that need the network or Redis: off, so the lab scores offline and starts without Redis. */
const RSPAMD_OFF = ["rbl", "spf", "dkim", "dmarc", "arc", "dkim_signing", "asn", "fuzzy_check", "neural", "ratelimit", "greylist",
  "replies", "url_reputation", "reputation", "phishing", "history_redis", "metadata_exporter", "mx_check", "emails", "multimap"];

/** Rspamd's top config: the package's stock rules, one scanner worker on loopback, no controller or proxy. */
function writeRspamd(uid, gid) {
  const conf = `# Generated by scripts/mail-lab.mjs; rewritten on every start.
.include "$CONFDIR/common.conf"
options {
    pidfile = "$RUNDIR/rspamd.pid";
    .include "$CONFDIR/options.inc"
    dns { timeout = 1s; retransmits = 1; }
}
logging {
    type = "file";
    filename = "$LOGDIR/rspamd.log";
    level = "warning";
}
worker "normal" {
    bind_socket = "${host}:${PORTS.rspamd}";
    .include "$CONFDIR/worker-normal.inc"
    count = 1;
}
`;
  writeFileSync(join(dirs.rspamd, "rspamd.conf"), conf);
  for (const module of RSPAMD_OFF) writeFileSync(join(dirs.rspamdLocal, `${module}.conf`), "enabled = false;\n");
  for (const dir of [dirs.rspamdDb, dirs.rspamdRun]) chownSync(dir, uid, gid);
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

if (process.getuid?.() !== 0) fail("run as root: Postfix and Dovecot start as root and drop privileges themselves.");
// Installed from here rather than chained in package.json, so that npm's SIGTERM reaches this process.
if (spawnSync("bash", [join(root, "scripts", "ensure-mail-lab.sh")], { stdio: "inherit" }).status !== 0) {
  fail("could not install Postfix, Dovecot and Rspamd (scripts/ensure-mail-lab.sh).");
}
for (const dir of Object.values(dirs)) mkdirSync(dir, { recursive: true });
if (existsSync(lockPath)) {
  const pid = Number(readFileSync(lockPath, "utf8"));
  if (pid && alive(pid)) fail(`already running (pid ${pid}); stop it first (Ctrl-C there, or kill ${pid}).`);
}
for (const [name, p] of Object.entries(PORTS)) {
  if (!(await portFree(p))) {
    fail(
      `port ${host}:${p} (${name}) is in use; set MAIL_LAB_*_PORT to choose another. If a lab was killed ` +
        `hard, its daemons may still run: see ${dirs.dovecotRun}/master.pid and ${dirs.queue}/pid/master.pid.`,
    );
  }
}
writeFileSync(lockPath, String(process.pid));
process.on("exit", () => {
  if (existsSync(lockPath) && readFileSync(lockPath, "utf8") === String(process.pid)) rmSync(lockPath, { force: true });
});

const uid = userId(MAIL_USER, "-u");
const gid = userId(MAIL_USER, "-g");
chownSync(dirs.mail, uid, gid);
chownSync(dirs.data, userId("postfix", "-u"), userId("postfix", "-g"));
const tls = ensureCertificates();
const mailboxes = ensureMailboxes();
writeDovecot(tls, mailboxes, uid, gid);
writePostfix(tls, mailboxes);
writeRspamd(uid, gid);
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
const rspamd = start("rspamd", "/usr/bin/rspamd", [
  "-f", "-u", MAIL_USER, "-g", sh("id", ["-gn", MAIL_USER]).trim(), "-c", join(dirs.rspamd, "rspamd.conf"),
  `--var=LOCAL_CONFDIR=${dirs.rspamd}`, `--var=DBDIR=${dirs.rspamdDb}`, `--var=RUNDIR=${dirs.rspamdRun}`, `--var=LOGDIR=${dirs.log}`,
]);

const { rspamd: rspamdPort, ...mailPorts } = PORTS;
const ready = await Promise.all([...Object.values(mailPorts).map((p) => waitForPort(p, 15000)), waitForRspamd(120000)]).then(
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
    rspamd: { url: `http://${host}:${rspamdPort}` },
    ca_file: tls.ca,
    mailboxes,
  };
  writeFileSync(jsonPath, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });

  console.log(`
  Salvo mail lab is running (Postfix pid ${postfix.pid}, Dovecot pid ${dovecot.pid}, Rspamd pid ${rspamd.pid}). Ctrl-C stops it.
  SMTP submission  ${host}:${PORTS.submission} STARTTLS + AUTH   (implicit TLS ${PORTS.submissions}, plaintext ${PORTS.plain})
  IMAP             ${host}:${PORTS.imap} STARTTLS          (implicit TLS ${PORTS.imaps})
  Rspamd           http://${host}:${rspamdPort}/checkv2   (RSPAMD_URL)
  Seeds            ${mailboxes.filter((m) => m.role === "seed").map((m) => `${m.email.split("@")[0]} (${m.provider_id})`).join(", ")}: INBOX, Promotions (tab), Junk (spam)
  Domain           ${DOMAIN}: ${mailboxes.map((m) => m.email.split("@")[0]).join(", ")}
  Accounts         .mail-lab.json     Local CA  ${tls.ca}
  Logs             ${dirs.log}/postfix.log, ${dirs.log}/dovecot.log
  Check it         npm run mail-lab:check
  `);
}
