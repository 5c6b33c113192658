import { and, eq, inArray } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import type { Bindings } from "../../src/platform/env";
import { senderStub } from "../../src/mailbox-agent/stub";
import { answers, choosePartners, sendTimes, zonedDay } from "../../src/warmup/rules";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { schema, testDb } from "../db";
import { createMailbox } from "../mailboxes/fixtures";

/**
 * A warmup pass's choices that need no mail server (its sends go to a server that is not there: each
 * is recorded, then refused, which is enough to see who receives what and when).
 */

const bindings = fileEnv() as unknown as Bindings;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A Wednesday 19:00 UTC (the warmup zone): the whole day's first emails are due. */
const EVENING = Date.parse("2031-03-05T19:00:00Z");
/** Thursday 2031-03-06, 00:00 UTC. */
const THURSDAY = Date.parse("2031-03-06T00:00:00Z");

const connect = (ids: number[], enabledAt: number) =>
  testDb().update(schema.emailAccounts).set({ isSmtpSuccess: true, isImapSuccess: true, warmupEnabledAt: new Date(enabledAt) }).where(inArray(schema.emailAccounts.id, ids));
const unhold = (id: number) => testDb().update(schema.emailAccounts).set({ sendHeldUntil: null, sendHeldReason: null }).where(eq(schema.emailAccounts.id, id));
const sentBy = (id: number, kind: "warmup" | "reply") =>
  testDb().select().from(schema.warmupMessages).where(and(eq(schema.warmupMessages.senderId, id), eq(schema.warmupMessages.kind, kind)));

describe("a warmup pass", () => {
  it("mails no partner twice in a day while others have had none, when a mailbox joins the pool during the day", async () => {
    const account = await provisionAccount();
    const sender = await createMailbox(account.apiKey, { warmup_enabled: true, time_to_wait_in_mins: 0 });
    const set = await callJson(`/api/v1/email-accounts/${sender.id}/warmup`, { method: "POST", apiKey: account.apiKey, body: { warmup_enabled: true, total_warmup_per_day: 2, warmup_min_count: 2, is_rampup_enabled: false } });
    expect(set.status).toBe(200);
    const others = [];
    for (let i = 0; i < 5; i++) others.push(await createMailbox(account.apiKey, { warmup_enabled: true }));
    const day = zonedDay(EVENING, "UTC");
    const partner = (id: number) => ({ id, provider: "example.com", domain: "sender.example.com" });
    // The joiner: first in the day's order of the whole pool, so with it the day's second email would go to the partner the first went to.
    const joiner = choosePartners(partner(sender.id), [sender.id, ...others.map((o) => o.id)].map(partner), 1, day)[0]!;
    await connect([sender.id, ...others.map((o) => o.id).filter((id) => id !== joiner)], EVENING - 7 * DAY);

    // The first email goes, and its refusal holds the mailbox.
    await senderStub(bindings, sender.id).runPass(EVENING, { mailboxId: sender.id, read: false });
    const [first] = await sentBy(sender.id, "warmup");
    expect(first).toBeDefined();
    expect(choosePartners(partner(sender.id), [sender.id, ...others.map((o) => o.id)].map(partner), 2, day)).toEqual([joiner, first!.receiverId]);
    await connect([joiner], EVENING - 7 * DAY);
    await unhold(sender.id);

    await senderStub(bindings, sender.id).runPass(EVENING + 10 * 60_000, { mailboxId: sender.id, read: false });
    const receivers = (await sentBy(sender.id, "warmup")).map((row) => row.receiverId);
    expect(receivers).toHaveLength(2);
    expect(new Set(receivers).size, `receivers today: ${receivers.join(", ")}`).toBe(2);
    // The rest of the day goes to those not yet mailed, the day's order kept, before any goes round again.
    const pool = [sender.id, ...others.map((o) => o.id)].map(partner);
    const order = choosePartners(partner(sender.id), pool, 5, day);
    expect(choosePartners(partner(sender.id), pool, 6, day, receivers)).toEqual([...order.filter((id) => !receivers.includes(id)), ...order.filter((id) => receivers.includes(id)), order.find((id) => !receivers.includes(id))]);
  });

  it("sends warmup mail only between 08:00 and 20:00 of the warmup zone: no reply at 03:00, no first email due at 23:00, the reply at 08:00", async () => {
    const account = await provisionAccount();
    const a = await createMailbox(account.apiKey, { warmup_enabled: true });
    const b = await createMailbox(account.apiKey, { warmup_enabled: true, time_to_wait_in_mins: 0 });
    expect((await callJson(`/api/v1/email-accounts/${b.id}/warmup`, { method: "POST", apiKey: account.apiKey, body: { warmup_enabled: true, reply_rate_percentage: 100 } })).status).toBe(200);
    await connect([a.id, b.id], THURSDAY - 7 * DAY);
    await testDb().insert(schema.warmupMessages).values({
      senderId: a.id,
      receiverId: b.id,
      kind: "warmup",
      messageId: `<wu.night${crypto.randomUUID().slice(0, 8)}@sender.example.com>`,
      subject: "quick question",
      sentAt: new Date(THURSDAY - 3 * HOUR),
      landed: "inbox",
      landedAt: new Date(THURSDAY - 2 * HOUR),
    });
    for (const at of [THURSDAY + 3 * HOUR, THURSDAY + 23 * HOUR]) {
      await senderStub(bindings, b.id).runPass(at, { mailboxId: b.id, read: false });
      expect((await testDb().select().from(schema.warmupMessages).where(eq(schema.warmupMessages.senderId, b.id))).length, new Date(at).toISOString()).toBe(0);
    }
    // At 08:00 the reply goes.
    await senderStub(bindings, b.id).runPass(THURSDAY + 8 * HOUR, { mailboxId: b.id, read: false });
    expect(await sentBy(b.id, "reply")).toHaveLength(1);
  });

  it("answers a message the reply rate picks even when 200 older ones it does not pick wait", async () => {
    const rate = 50;
    const account = await provisionAccount();
    const a = await createMailbox(account.apiKey, { warmup_enabled: true });
    const b = await createMailbox(account.apiKey, { warmup_enabled: true, time_to_wait_in_mins: 0 });
    expect((await callJson(`/api/v1/email-accounts/${b.id}/warmup`, { method: "POST", apiKey: account.apiKey, body: { warmup_enabled: true, reply_rate_percentage: rate } })).status).toBe(200);
    await connect([a.id, b.id], THURSDAY - 7 * DAY);
    const messageIds = (n: number, picked: boolean) => {
      const out: string[] = [];
      while (out.length < n) {
        const id = `<wu.rv${crypto.randomUUID().replace(/-/g, "").slice(0, 20)}@sender.example.com>`;
        if (answers(id, rate) === picked) out.push(id);
      }
      return out;
    };
    const received = (messageId: string, landedAt: number) => ({
      senderId: a.id,
      receiverId: b.id,
      kind: "warmup" as const,
      messageId,
      subject: "quick question",
      sentAt: new Date(landedAt - 60_000),
      landed: "inbox" as const,
      landedAt: new Date(landedAt),
    });
    // 08:00, when warmup mail may go and before the day's first email is due: only replies are.
    const now = THURSDAY + 8 * HOUR;
    const waiting = messageIds(200, false).map((id, i) => received(id, now - 30 * HOUR + i * 60_000));
    for (let i = 0; i < waiting.length; i += 10) await testDb().insert(schema.warmupMessages).values(waiting.slice(i, i + 10));
    await testDb().insert(schema.warmupMessages).values(received(messageIds(1, true)[0]!, now - HOUR));

    await senderStub(bindings, b.id).runPass(now, { mailboxId: b.id, read: false });
    expect(await sentBy(b.id, "reply"), "the picked message is answered (its reply recorded before it goes)").toHaveLength(1);
  });

  it("leaves a shared cap room for the day's first emails still to come: a reply that would take it waits", async () => {
    const rate = 100;
    const cap = 4;
    const account = await provisionAccount();
    const a = await createMailbox(account.apiKey, { warmup_enabled: true });
    const b = await createMailbox(account.apiKey, { warmup_enabled: true, time_to_wait_in_mins: 0, max_email_per_day: cap });
    const set = await callJson(`/api/v1/email-accounts/${b.id}/warmup`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { warmup_enabled: true, total_warmup_per_day: 3, warmup_min_count: 3, is_rampup_enabled: false, auto_adjust_warmup: true, reply_rate_percentage: rate },
    });
    expect(set.status).toBe(200);
    await connect([a.id, b.id], THURSDAY - 7 * DAY);
    const times = sendTimes(b.id, zonedDay(THURSDAY, "UTC"), 3, "UTC");
    // Between the day's first and second email: one first email and one reply went, two first emails are to come.
    const now = times[0]! + 60_000;
    expect(now).toBeLessThan(times[1]!);
    const mail = (kind: "warmup" | "reply", senderId: number, receiverId: number, at: number, n: number) => ({
      senderId,
      receiverId,
      kind,
      messageId: `<wu.room${n}${crypto.randomUUID().slice(0, 8)}@example.com>`,
      subject: "quick question",
      sentAt: new Date(at),
    });
    await testDb().insert(schema.warmupMessages).values([mail("warmup", b.id, a.id, times[0]!, 1), mail("reply", b.id, a.id, times[0]! - HOUR, 2)]);
    await testDb().insert(schema.warmupMessages).values({ ...mail("warmup", a.id, b.id, now - 2 * HOUR, 3), landed: "inbox", landedAt: new Date(now - HOUR) });

    await senderStub(bindings, b.id).runPass(now, { mailboxId: b.id, read: false });
    expect(await sentBy(b.id, "reply"), "2 sent and 2 first emails to come fill the cap of 4: no reply").toHaveLength(1);
    expect(await sentBy(b.id, "warmup")).toHaveLength(1);

    // At the second email's time it goes (to a server that is not there: recorded, then refused).
    await senderStub(bindings, b.id).runPass(times[1]!, { mailboxId: b.id, read: false });
    expect(await sentBy(b.id, "warmup")).toHaveLength(2);
  });
});
