// `npm run demo:campaign`: with `npm run dev` and `npm run mail-lab` running, starts a campaign of the
// demo account through the API: two steps (the second threaded on the first), open all week in UTC,
// one email a minute, to the lab's lead1..3, from the demo mailbox `npm run dev` gave the account.
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { runningLab } from "./lib/mail-lab.mjs";

const root = join(import.meta.dirname, "..");
const port = process.env.PORT ?? "8787";
const base = `http://127.0.0.1:${port}`;
const DEMO_SENDER = "sender1@lab.salvo.test";
const LEADS = [
  { local: "lead1", first_name: "Ada" },
  { local: "lead2", first_name: "Ben" },
  { local: "lead3", first_name: "Cleo" },
];

function fail(message) {
  console.error(`demo:campaign: ${message}`);
  process.exit(1);
}

const keyPath = join(root, ".demo-key");
if (!existsSync(keyPath)) fail("no .demo-key: run `npm run dev` first (it seeds the demo account).");
const apiKey = readFileSync(keyPath, "utf8").trim();
const lab = runningLab();
if (!lab) fail("no mail lab is running: start `npm run mail-lab` in another terminal, then restart `npm run dev`.");

/** One API call with the demo key; waits out the key's rate limit (10 a second) rather than failing. */
async function api(method, path, body) {
  for (let attempt = 0; ; attempt += 1) {
    let response;
    try {
      response = await fetch(`${base}${path}`, {
        method,
        headers: { "X-API-Key": apiKey, ...(body === undefined ? {} : { "Content-Type": "application/json" }) },
        body: body === undefined ? undefined : JSON.stringify(body),
      });
    } catch {
      fail(`nothing answers on ${base}: start \`npm run dev\`${port === "8787" ? "" : ` with PORT=${port}`} first.`);
    }
    if (response.status === 429 && attempt < 5) {
      await new Promise((resolve) => setTimeout(resolve, 1000 * Number(response.headers.get("Retry-After") ?? 1)));
      continue;
    }
    const answer = await response.json().catch(() => null);
    if (!response.ok) fail(`${method} ${path} answered ${response.status}: ${JSON.stringify(answer)}`);
    return answer;
  }
}

const mailboxes = await api("GET", "/api/v1/email-accounts/?limit=100");
const mailbox = mailboxes.find((m) => m.from_email === DEMO_SENDER);
if (!mailbox) fail(`the demo account has no mailbox ${DEMO_SENDER}: restart \`npm run dev\` with the lab running (it adds it).`);
if (mailbox.is_smtp_success === false) {
  console.warn(`demo:campaign: warning: the demo mailbox's SMTP check failed (${mailbox.smtp_failure_error}); it will not send.`);
}

const name = `Demo ${new Date().toISOString().slice(0, 16).replace("T", " ")} UTC`;
const { id } = await api("POST", "/api/v1/campaigns/create", { name });
await api("POST", `/api/v1/campaigns/${id}/sequences`, {
  sequences: [
    {
      seq_number: 1,
      seq_delay_details: { delay_in_days: 0 },
      subject: "{Hi|Hello} {{first_name}}, a quick demo",
      email_body: '<p>Hi {{first_name}},</p><p>This is Salvo sending from the mail lab. <a href="https://example.com/demo">A tracked link</a>.</p>',
    },
    // No subject: the follow-up goes out as "Re: <first subject>", threaded on the first email.
    { seq_number: 2, seq_delay_details: { delay_in_days: 0 }, subject: "", email_body: "<p>Following up on my note, {{first_name}}.</p>" },
  ],
});
await api("POST", `/api/v1/campaigns/${id}/schedule`, {
  timezone: "UTC",
  days_of_the_week: [0, 1, 2, 3, 4, 5, 6],
  start_hour: "00:00",
  end_hour: "23:59",
  min_time_btw_emails: 1,
  max_new_leads_per_day: 100,
});
await api("POST", `/api/v1/campaigns/${id}/settings`, { unsubscribe_text: "Unsubscribe from these demo emails" });
await api("POST", `/api/v1/campaigns/${id}/leads`, {
  lead_list: LEADS.map((lead) => ({ email: `${lead.local}@lab.salvo.test`, first_name: lead.first_name })),
});
await api("POST", `/api/v1/campaigns/${id}/email-accounts`, { email_account_ids: [mailbox.id] });
await api("POST", `/api/v1/campaigns/${id}/status`, { status: "START" });
const campaign = await api("GET", `/api/v1/campaigns/${id}`);

const today = new Date().toISOString().slice(0, 10);
const header = `-H "X-API-Key: ${apiKey}"`;
console.log(`
  Started campaign ${id} "${name}": 2 steps to lead1..3@lab.salvo.test from ${DEMO_SENDER} (email account ${mailbox.id}).
  sending_status now: ${campaign.sending_status?.code} (${campaign.sending_status?.message})
  One email a minute: the three first emails and the three follow-ups arrive within about six minutes.

  Watch it:
    curl ${header} ${base}/api/v1/campaigns/${id}
    curl ${header} "${base}/api/v1/campaigns/${id}/analytics-by-date?start_date=${today}&end_date=${today}"
    npm run mail-lab:inbox -- lead1@lab.salvo.test          (lead2, lead3 too; --show N prints message N raw)
`);
