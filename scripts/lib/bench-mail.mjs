// Shared by the mail benchmarks (bench-engine, bench-replies): lab mailboxes and campaigns through the API.
import { DatabaseSync } from "node:sqlite";
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

/** The API holds a campaign's gap to 1-1440 minutes; the benchmark measures the engine, so it lifts it. */
export function withoutGap(server, campaignIds) {
  const db = new DatabaseSync(localD1File(server.stateDir));
  db.exec("PRAGMA busy_timeout = 5000");
  const update = db.prepare("UPDATE campaigns SET schedule = json_set(schedule, '$.min_time_btw_emails', 0) WHERE id = ?");
  for (const id of campaignIds) update.run(id);
  db.close();
}
