import { createScheduledController } from "cloudflare:test";
import { eq, inArray } from "drizzle-orm";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import worker from "../../src/index";
import { pruneDeliveredBefore } from "../../src/webhooks/retention";
import { schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv, env } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { createWebhook, insertDelivery, interceptReceiver } from "../webhooks/fixtures";

const DAY = 86_400_000;

// The cron also requeues the scene's pending delivery: its receiver answers here.
let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

function minuteCron(at: number, overrides: Partial<Cloudflare.Env> = {}) {
  return worker.scheduled(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), { ...env, ...overrides });
}

/** A webhook with deliveries of every kind, written as if made up to 39 days ago, each with two attempts. */
async function scene() {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const hook = await createWebhook(account.apiKey, campaign);
  const now = Date.now();
  const made: Record<string, number[]> = {};
  const add = async (name: string, status: "pending" | "delivered" | "failed", ageDays: number, count = 1) => {
    for (let i = 0; i < count; i += 1) {
      const at = new Date(now - ageDays * DAY - i * 1000);
      const { deliveryId } = await insertDelivery({
        accountId: account.id,
        webhookId: hook.id,
        campaignId: campaign,
        eventType: "EMAIL_SENT",
        payload: { event_type: "EMAIL_SENT", n: i },
        status,
        attempts: 2,
        createdAt: at,
        nextAttemptAt: status === "pending" ? at : null,
        deliveredAt: status === "delivered" ? at : null,
      });
      await testDb()
        .insert(schema.webhookAttempts)
        .values([
          { deliveryId, attemptedAt: at, statusCode: 500, outcome: "retry", durationMs: 12 },
          { deliveryId, attemptedAt: at, statusCode: status === "delivered" ? 200 : 400, outcome: status === "delivered" ? "delivered" : "failed", durationMs: 9 },
        ]);
      (made[name] ??= []).push(deliveryId);
    }
  };
  await add("oldDelivered", "delivered", 35, 7);
  await add("recentDelivered", "delivered", 29);
  await add("oldFailed", "failed", 39);
  await add("oldPending", "pending", 39);
  return { account, hook, now, made };
}

async function remaining(ids: number[]) {
  const rows = await testDb().select({ id: schema.webhookDeliveries.id }).from(schema.webhookDeliveries).where(inArray(schema.webhookDeliveries.id, ids)).all();
  return rows.map((row) => row.id).sort((a, b) => a - b);
}

async function attemptsOf(ids: number[]) {
  return (await testDb().select({ id: schema.webhookAttempts.id }).from(schema.webhookAttempts).where(inArray(schema.webhookAttempts.deliveryId, ids)).all()).length;
}

describe("webhook delivery retention (WEBHOOK_DELIVERY_RETENTION_DAYS, the minute cron)", () => {
  it("after a simulated 40 days with the 30-day default, delivered deliveries older than 30 days and their attempts are gone; nothing else is touched", async () => {
    const { account, hook, now, made } = await scene();
    const all = Object.values(made).flat();
    await minuteCron(now);

    expect(await remaining(made.oldDelivered!)).toEqual([]);
    expect(await attemptsOf(made.oldDelivered!)).toBe(0);
    const kept = [...made.recentDelivered!, ...made.oldFailed!, ...made.oldPending!].sort((a, b) => a - b);
    expect(await remaining(all)).toEqual(kept);
    expect(await attemptsOf(kept)).toBe(kept.length * 2);

    // What the API shows: the failed one is still there to read and retrigger.
    const listed = await callJson<{ data: { id: number; status: string }[] }>(`/api/v1/webhook/${hook.id}/deliveries`, { apiKey: account.apiKey });
    expect(listed.body.data.map((d) => d.id).sort((a, b) => a - b)).toEqual(kept);
    const gone = await callJson(`/api/v1/webhook/${hook.id}/deliveries/${made.oldDelivered![0]}`, { apiKey: account.apiKey });
    expect(gone.status).toBe(404);
  });

  it("prunes in bounded chunks, oldest first, and a setting of 0 keeps every delivery", async () => {
    const { now, made } = await scene();
    const cutoff = now - 30 * DAY;
    // Other accounts' old deliveries were pruned by the test before (this file runs on fresh storage).
    await minuteCron(now, { WEBHOOK_DELIVERY_RETENTION_DAYS: "0" });
    expect(await remaining(made.oldDelivered!)).toHaveLength(7);

    expect(await pruneDeliveredBefore(fileEnv().DB, cutoff, 3, 1)).toBe(3);
    const left = await remaining(made.oldDelivered!);
    expect(left).toHaveLength(4);
    // Oldest first: the scene's deliveries are older the later they were made.
    expect(left).toEqual(made.oldDelivered!.slice(0, 4));
    expect(await pruneDeliveredBefore(fileEnv().DB, cutoff, 3, 5)).toBe(4);
    expect(await remaining(made.oldDelivered!)).toEqual([]);
    expect(await remaining(made.recentDelivered!)).toHaveLength(1);
  });

  it("a delivery redelivered after its retention counts from its new delivery", async () => {
    const { account, hook, now, made } = await scene();
    const id = made.oldFailed![0]!;
    await testDb().update(schema.webhookDeliveries).set({ status: "delivered", deliveredAt: new Date(now - DAY) }).where(eq(schema.webhookDeliveries.id, id));
    await minuteCron(now);
    expect(await remaining([id])).toEqual([id]);
    const one = await callJson<{ data: { status: string } }>(`/api/v1/webhook/${hook.id}/deliveries/${id}`, { apiKey: account.apiKey });
    expect(one.body.data.status).toBe("delivered");
  });
});
