// Shared by the mail benchmarks (bench-engine, bench-replies, profile-engine, chaos-claim): lab mailboxes and campaigns through the API.
import { chownSync, readdirSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { join } from "node:path";
import { DatabaseSync } from "node:sqlite";
import { connect as tlsConnect } from "node:tls";
import { api, localD1File } from "./bench-tools.mjs";

/** A mailbox save body for the lab: SMTP over STARTTLS, no gap, a large cap. */
export const labMailboxBody = (lab, from, login, extra = {}) => ({
  from_name: "Bench",
  from_email: from,
  user_name: login.email,
  password: login.password,
  smtp_host: lab.smtp.host,
  smtp_port: lab.smtp.port,
  smtp_port_type: "STARTTLS",
  imap_host: lab.imap.host,
  imap_port: lab.imap.port,
  max_email_per_day: 10_000,
  time_to_wait_in_mins: 0,
  ...extra,
});

export async function waitForChecks(server, apiKey, ids) {
  for (const id of ids) {
    for (let i = 0; ; i += 1) {
      const mailbox = await api(server, apiKey, `/api/v1/email-accounts/${id}`);
      if (mailbox.is_smtp_success === true) break;
      if (mailbox.is_smtp_success === false) throw new Error(`mailbox ${id} failed its check: ${mailbox.smtp_failure_error}`);
      if (i > 200) throw new Error(`mailbox ${id} was never checked`);
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

export async function campaignWithStep(server, apiKey, name) {
  const { id } = await api(server, apiKey, "/api/v1/campaigns/create", { method: "POST", body: { name } });
  await api(server, apiKey, `/api/v1/campaigns/${id}/sequences`, {
    method: "POST",
    body: {
      sequences: [
        {
          seq_number: 1,
          seq_delay_details: { delay_in_days: 0 },
          subject: "{Hello|Hi} {{first_name}}",
          email_body: '<p>Hi {{first_name}},</p><p>A <a href="https://example.com/offer">link</a>.</p>',
        },
      ],
    },
  });
  await api(server, apiKey, `/api/v1/campaigns/${id}/schedule`, {
    method: "POST",
    body: { timezone: "UTC", days_of_the_week: [0, 1, 2, 3, 4, 5, 6], start_hour: "00:00", end_hour: "23:59", min_time_btw_emails: 1, max_new_leads_per_day: 10_000 },
  });
  return id;
}

/** A campaign of one step to `leads` (uploaded 400 at a time, the route's most) on the mailboxes `ids`, its gap lifted; answers its id. */
export async function benchCampaign(server, apiKey, name, ids, leads) {
  const campaignId = await campaignWithStep(server, apiKey, name);
  for (let i = 0; i < leads.length; i += 400) {
    await api(server, apiKey, `/api/v1/campaigns/${campaignId}/leads`, { method: "POST", body: { lead_list: leads.slice(i, i + 400) } });
  }
  await api(server, apiKey, `/api/v1/campaigns/${campaignId}/email-accounts`, { method: "POST", body: { email_account_ids: ids } });
  withoutGap(server, [campaignId]);
  return campaignId;
}

/** The API holds a campaign's gap to 1-1440 minutes; the benchmark measures the engine, so it lifts it. */
export function withoutGap(server, campaignIds) {
  const db = new DatabaseSync(localD1File(server.stateDir));
  db.exec("PRAGMA busy_timeout = 5000");
  const update = db.prepare("UPDATE campaigns SET schedule = json_set(schedule, '$.min_time_btw_emails', 0) WHERE id = ?");
  for (const id of campaignIds) update.run(id);
  db.close();
}

/** Writes messages into a lab mailbox's Maildir/new (`box` is one of the lab's mailboxes), owned like the lab's own mail. */
export function fillMaildir(lab, box, messages) {
  const [local, domain] = box.email.split("@");
  const dir = join(lab.mail_dir, domain, local, "Maildir", "new");
  const { uid, gid } = statSync(dir);
  const stamp = Math.floor(Date.now() / 1000);
  messages.forEach((raw, i) => {
    const file = join(dir, `${stamp}.M${i}R${Math.random().toString(36).slice(2)}P${process.pid}.bench`);
    writeFileSync(file, raw);
    chownSync(file, uid, gid);
  });
}

/** One read of a mailbox's INBOX through the operator route, as its object reads. */
export async function readPass(server, mailboxId) {
  const response = await fetch(`${server.url}/admin/v1/email-accounts/${mailboxId}/read-pass`, { method: "POST", headers: { Authorization: `Bearer ${server.adminToken}` } });
  const body = await response.json();
  if (!response.ok) throw new Error(`read-pass: ${response.status} ${JSON.stringify(body)}`);
  return body;
}

/** Sends one message through the lab's implicit-TLS submission port as `from` (enough SMTP for a benchmark). */
export function smtpSend(lab, from, to, raw) {
  return new Promise((resolve, reject) => {
    const socket = tlsConnect({ host: lab.smtp_tls.host, port: lab.smtp_tls.port, ca: readFileSync(lab.ca_file), servername: "localhost" });
    const steps = [
      `EHLO bench\r\n`,
      `AUTH PLAIN ${Buffer.from(`\0${from.email}\0${from.password}`).toString("base64")}\r\n`,
      `MAIL FROM:<${from.email}>\r\n`,
      `RCPT TO:<${to}>\r\n`,
      "DATA\r\n",
      `${raw}\r\n.\r\n`,
      "QUIT\r\n",
    ];
    let buffer = "";
    socket.on("data", (chunk) => {
      buffer += chunk.toString();
      if (!/\r\n$/.test(buffer) || /^\d{3}-/m.test(buffer.split("\r\n").filter(Boolean).at(-1) ?? "")) return;
      const code = Number(buffer.slice(0, 3));
      buffer = "";
      if (code >= 400) return reject(new Error(`SMTP answered ${code}`));
      const next = steps.shift();
      if (next) socket.write(next);
      else socket.end(resolve);
    });
    socket.on("error", reject);
  });
}

/**
 * What the lab's lead mailboxes (lead1..lead5, which take any +tag) received for addresses holding
 * `marker`: how many messages arrived for each address, by its To header.
 */
export function labDeliveries(lab, marker, domain = "lab.salvo.test") {
  const byAddress = new Map();
  for (const user of ["lead1", "lead2", "lead3", "lead4", "lead5"]) {
    const home = join(lab.mail_dir, domain, user, "Maildir");
    for (const dir of ["new", "cur"]) {
      let names;
      try {
        names = readdirSync(join(home, dir));
      } catch {
        continue;
      }
      for (const name of names) {
        const raw = readFileSync(join(home, dir, name), "utf8");
        const to = /^To:.*?<?([^\s<>]+@[^\s<>]+)>?\s*$/im.exec(raw.split(/\r?\n\r?\n/)[0] ?? "")?.[1]?.toLowerCase();
        if (to?.includes(marker)) byAddress.set(to, (byAddress.get(to) ?? 0) + 1);
      }
    }
  }
  return byAddress;
}

/** `labDeliveries` once its total has held still for 3 s (Postfix delivers into the Maildirs a moment after its 250). */
export async function settledLabDeliveries(lab, marker, domain) {
  const total = (map) => [...map.values()].reduce((a, b) => a + b, 0);
  let delivered = labDeliveries(lab, marker, domain);
  for (let stable = 0; stable < 6; ) {
    await new Promise((resolve) => setTimeout(resolve, 500));
    const again = labDeliveries(lab, marker, domain);
    stable = total(again) === total(delivered) ? stable + 1 : 0;
    delivered = again;
  }
  return delivered;
}
