import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../src/index";
import { ADMIN_TOKEN, call, callJson, provisionAccount, type TestAccount, fileEnv, env } from "./helpers";
import { createCampaign } from "./campaigns/fixtures";
import { addMessages, recordsOf, setMailbox, setRecord, setWebhook, type MessageStatus } from "./db";
import { createMailbox } from "./mailboxes/fixtures";
import { consumeDelivery, createWebhook, insertDelivery, interceptReceiver, storeDelivery } from "./webhooks/fixtures";

const MINUTE = 60_000;
const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

interface Metrics {
  generated_at: string;
  webhook_deliveries: { pending: number; overdue: number; oldest_pending_due_at: string | null };
  sends: { since: string; sent: number; unconfirmed: number };
  mailboxes: { total: number; suspended: number; failing: number };
  due_jobs: { snoozes: number; scheduled_replies: number; paused_records: number; spam_tests: number; csv_imports: number };
}

const metrics = async () => {
  const { status, body } = await callJson<Metrics>("/admin/metrics", { headers: admin });
  expect(status).toBe(200);
  return body;
};

/** A campaign with two leads, a webhook and a mailbox of a fresh account. */
async function scene(account: TestAccount) {
  const campaignId = await createCampaign(account.apiKey, { name: "Ops" });
  await callJson(`/api/v1/campaigns/${campaignId}/leads`, {
    method: "POST",
    apiKey: account.apiKey,
    body: { lead_list: [0, 1].map((i) => ({ email: `ops${i}-${crypto.randomUUID()}@lead.example` })) },
  });
  const records = await recordsOf(campaignId);
  const hook = await createWebhook(account.apiKey, campaignId);
  const mailbox = await createMailbox(account.apiKey, { from_email: `ops-${crypto.randomUUID()}@sender.example` });
  return { campaignId, recordIds: records.map((r) => r.id), hook, mailboxId: mailbox.id };
}

async function insertMessage(
  account: TestAccount,
  campaignId: number,
  recordId: number,
  step: number,
  mailboxId: number,
  sentAt: number | null,
  status: MessageStatus = sentAt === null ? "sending" : "sent",
  updatedAt = Date.now(),
) {
  await addMessages([
    {
      accountId: account.id,
      campaignId,
      campaignLeadId: recordId,
      step,
      emailAccountId: mailboxId,
      messageId: "<ops@x>",
      status,
      sentAt: sentAt === null ? null : new Date(sentAt),
      createdAt: new Date(),
      updatedAt: new Date(updatedAt),
    },
  ]);
}

describe("GET /admin/metrics", () => {
  it("counts pending and overdue deliveries, today's sends, suspended and failing mailboxes and due cron work from D1", async () => {
    const account = await provisionAccount();
    const { campaignId, recordIds, hook, mailboxId } = await scene(account);
    const before = await metrics();
    const now = Date.now();
    const midnight = new Date(now);
    midnight.setUTCHours(0, 0, 0, 0);

    await insertDelivery({ accountId: account.id, webhookId: hook.id, campaignId, eventType: "EMAIL_SENT", payload: {}, nextAttemptAt: new Date(now - 10 * MINUTE) });
    await insertDelivery({ accountId: account.id, webhookId: hook.id, campaignId, eventType: "EMAIL_SENT", payload: {}, nextAttemptAt: new Date(now + MINUTE) });
    await insertDelivery({ accountId: account.id, webhookId: hook.id, campaignId, eventType: "EMAIL_SENT", payload: {}, status: "delivered", nextAttemptAt: null });
    await insertMessage(account, campaignId, recordIds[0]!, 1, mailboxId, now - 1000);
    await insertMessage(account, campaignId, recordIds[1]!, 1, mailboxId, midnight.getTime() - MINUTE);
    await insertMessage(account, campaignId, recordIds[0]!, 2, mailboxId, null);
    // In doubt today, and yesterday (not counted).
    await insertMessage(account, campaignId, recordIds[1]!, 2, mailboxId, null, "unconfirmed");
    await insertMessage(account, campaignId, recordIds[0]!, 3, mailboxId, null, "unconfirmed", midnight.getTime() - MINUTE);
    await setMailbox(mailboxId, { isSuspended: true, isImapSuccess: false });
    await setRecord(recordIds[0]!, { snoozedUntil: new Date(now - MINUTE) });
    await setRecord(recordIds[1]!, { snoozedUntil: new Date(now + 60 * MINUTE), resumeAt: new Date(now - MINUTE) });

    const after = await metrics();
    expect(after.webhook_deliveries.pending - before.webhook_deliveries.pending).toBe(2);
    expect(after.webhook_deliveries.overdue - before.webhook_deliveries.overdue).toBe(1);
    expect(Date.parse(after.webhook_deliveries.oldest_pending_due_at!)).toBeLessThanOrEqual(now - 10 * MINUTE);
    expect(after.sends).toEqual({ since: midnight.toISOString(), sent: before.sends.sent + 1, unconfirmed: before.sends.unconfirmed + 1 });
    expect(after.mailboxes.total - before.mailboxes.total).toBe(0);
    expect(after.mailboxes.suspended - before.mailboxes.suspended).toBe(1);
    expect(after.mailboxes.failing - before.mailboxes.failing).toBe(1);
    expect(after.due_jobs.snoozes - before.due_jobs.snoozes).toBe(1);
    expect(after.due_jobs.paused_records - before.due_jobs.paused_records).toBe(1);
    expect(after.due_jobs).toMatchObject({ scheduled_replies: before.due_jobs.scheduled_replies, spam_tests: before.due_jobs.spam_tests });
  });

  it("is for the operator only: 401 without the admin token, 404 when none is configured, and described in the OpenAPI document", async () => {
    const account = await provisionAccount();
    expect((await call("/admin/metrics")).status).toBe(401);
    expect((await call("/admin/metrics", { headers: { Authorization: `Bearer ${account.apiKey}` } })).status).toBe(401);
    const ctx = createExecutionContext();
    const disabled = await worker.fetch(new Request("http://salvo.test/admin/metrics", { headers: admin }), { ...env, ADMIN_TOKEN: undefined }, ctx);
    await waitOnExecutionContext(ctx);
    expect(disabled.status).toBe(404);
    const { body: document } = await callJson<{ paths: Record<string, { get?: { security?: unknown } }> }>("/openapi.json");
    expect(document.paths["/admin/metrics"]?.get?.security).toEqual([{ AdminBearer: [] }]);
  });
});

describe("structured job logs", () => {
  let lines: string[];
  beforeEach(() => {
    lines = [];
    const keep = (line: string) => void lines.push(line);
    vi.spyOn(console, "log").mockImplementation(keep);
    vi.spyOn(console, "warn").mockImplementation(keep);
    vi.spyOn(console, "error").mockImplementation(keep);
  });
  afterEach(() => vi.restoreAllMocks());

  const entries = (message: string) =>
    lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((entry) => entry.message === message);
  const minuteCron = (at: number, overrides: Partial<Cloudflare.Env> = {}) =>
    worker.scheduled!(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), { ...env, ...overrides });

  it("a cron firing writes one line: every job with its count and duration, and the firing's duration", async () => {
    const account = await provisionAccount();
    const { recordIds } = await scene(account);
    const at = Date.now();
    await setRecord([recordIds[0]!, recordIds[1]!], { snoozedUntil: new Date(at - MINUTE) });
    const due = (await metrics()).due_jobs.snoozes;
    expect(due).toBeGreaterThanOrEqual(2);

    await minuteCron(at);
    const [run, ...more] = entries("cron run");
    expect(more).toEqual([]);
    expect(run).toMatchObject({ level: "info", cron: "* * * * *", scheduled_at: new Date(at).toISOString(), failed: [] });
    expect(typeof run!.duration_ms).toBe("number");
    const jobs = run!.jobs as Record<string, { count?: number; duration_ms: number; error?: string }>;
    expect(Object.keys(jobs).sort()).toEqual(
      [
        "categorise_missed_replies",
        "check_placements",
        "claim_id_ranges",
        "continue_account_moves",
        "continue_csv_imports",
        "continue_email_verifications",
        "continue_triage_replays",
        "learn_email_providers",
        "rearm_late_senders",
        "recheck_mailboxes",
        "release_snoozes",
        "requeue_webhook_deliveries",
        "prune_webhook_deliveries",
        "resume_paused_records",
        "retry_verification_webhooks",
        "seal_legacy_secrets",
        "start_spam_tests",
        "wake_scheduled_replies",
      ].sort(),
    );
    expect(jobs.release_snoozes).toMatchObject({ count: due });
    for (const job of Object.values(jobs)) expect(typeof job.count === "number" && typeof job.duration_ms === "number").toBe(true);
  });

  it("a failing job is named with its error at level error, the other jobs still run, and no secret is written", async () => {
    const account = await provisionAccount();
    const { hook, recordIds } = await scene(account);
    await setWebhook(hook.id, { secretCiphertext: null, legacySecret: hook.secret });
    const at = Date.now();
    await setRecord(recordIds[0]!, { snoozedUntil: new Date(at - MINUTE) });
    const due = (await metrics()).due_jobs.snoozes;

    await expect(minuteCron(at, { SECRETS_KEY: undefined })).rejects.toThrow(/SECRETS_KEY/);
    const [run] = entries("cron run");
    expect(run).toMatchObject({ level: "error", failed: ["seal_legacy_secrets"] });
    const jobs = run!.jobs as Record<string, { count?: number; error?: string }>;
    expect(jobs.seal_legacy_secrets!.error).toMatch(/SECRETS_KEY is not set/);
    expect(jobs.release_snoozes).toMatchObject({ count: due });
    const written = lines.join("\n");
    expect(written).not.toContain(hook.secret);
    expect(written).not.toContain(String(fileEnv().SECRETS_KEY).split(":")[1]);
    expect(written).not.toContain(account.apiKey);
  });

  it("a queue batch writes one line with the queue, its messages acknowledged and retried, and the duration", async () => {
    const receiver = interceptReceiver();
    try {
      const account = await provisionAccount();
      const { campaignId, hook } = await scene(account);
      const { deliveryId } = await storeDelivery(account.id, hook.id, campaignId);
      await consumeDelivery(deliveryId);
      const { deliveryId: unsigned } = await storeDelivery(account.id, hook.id, campaignId);
      await consumeDelivery(unsigned, { SECRETS_KEY: undefined });

      const [delivered, retried, ...more] = entries("queue batch");
      expect(more).toEqual([]);
      expect(delivered).toMatchObject({ level: "info", queue: "salvo-webhooks", messages: 1, acked: 1, retried: 0 });
      expect(retried).toMatchObject({ level: "info", queue: "salvo-webhooks", messages: 1, acked: 0, retried: 1 });
      expect(typeof delivered!.duration_ms).toBe("number");
      expect(receiver.received).toHaveLength(1);
      expect(lines.join("\n")).not.toContain(hook.secret);
    } finally {
      receiver.restore();
    }
  });
});
