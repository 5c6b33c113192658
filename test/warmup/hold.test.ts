import { eq, inArray } from "drizzle-orm";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Bindings } from "../../src/platform/env";
import type { MailboxSender } from "../../src/mailbox-agent/mailbox.do";
import { WAKE_SLACK_MS } from "../../src/mailbox-agent/recorded-wake";
import { senderStub } from "../../src/mailbox-agent/stub";
import { fileEnv, provisionAccount } from "../helpers";
import { schema, testDb } from "../db";
import { createMailbox } from "../mailboxes/fixtures";

const bindings = fileEnv() as unknown as Bindings;
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
/** A Wednesday 18:00 UTC (the warmup zone): most of the day's first sends are due, and a hold of an hour ends inside the hours warmup mail goes (08:00-20:00). */
const EVENING = Date.parse("2031-03-05T18:00:00Z");

const alarmOf = (mailboxId: number) => runInDurableObject(senderStub(bindings, mailboxId), (_: MailboxSender, state) => state.storage.getAlarm());

describe("warmup and a mailbox its server holds", () => {
  it("sends no warmup mail while the hold lasts and wakes at its end; a refusal that holds the mailbox ends its warmup pass and holds its campaign mail too", async () => {
    const account = await provisionAccount();
    const sender = await createMailbox(account.apiKey, { warmup_enabled: true, time_to_wait_in_mins: 0 });
    const partner = await createMailbox(account.apiKey, { warmup_enabled: true });
    const until = EVENING + HOUR;
    await testDb()
      .update(schema.emailAccounts)
      .set({ isSmtpSuccess: true, isImapSuccess: true, warmupEnabledAt: new Date(EVENING - 7 * DAY) })
      .where(inArray(schema.emailAccounts.id, [sender.id, partner.id]));
    await testDb()
      .update(schema.emailAccounts)
      .set({ sendHeldUntil: new Date(until), sendHeldReason: "550 5.4.5 Daily user sending limit exceeded" })
      .where(eq(schema.emailAccounts.id, sender.id));
    const tried = async () => (await testDb().select().from(schema.warmupMessages).where(eq(schema.warmupMessages.senderId, sender.id))).length;

    const held = await senderStub(bindings, sender.id).runPass(EVENING, { mailboxId: sender.id, read: false });
    expect(await tried(), "each warmup email is recorded before it goes: none was").toBe(0);
    expect(await alarmOf(sender.id), "the object wakes when the hold ends").toBe(until);
    const [recorded] = await testDb().select({ wakeAt: schema.emailAccounts.engineWakeAt }).from(schema.emailAccounts).where(eq(schema.emailAccounts.id, sender.id));
    expect(recorded!.wakeAt?.getTime(), "the cron's wake, a slack past the alarm").toBe(until + WAKE_SLACK_MS);
    expect(held.sent).toBe(0);

    // At the hold's end the day's due warmup mail goes, here to a server that is not there: the first
    // email is recorded and refused, and that refusal holds the mailbox again (its campaign mail too), so
    // the other nine due wait for the next try.
    await senderStub(bindings, sender.id).runPass(until, { mailboxId: sender.id, read: false });
    const rows = await testDb().select().from(schema.warmupMessages).where(eq(schema.warmupMessages.senderId, sender.id));
    expect(rows.map((r) => r.status)).toEqual(["refused"]);
    const [row] = await testDb().select().from(schema.emailAccounts).where(eq(schema.emailAccounts.id, sender.id));
    expect(row!.sendHeldUntil?.getTime()).toBe(until + 5 * 60_000);
    expect(row!.sendHeldReason).toBe(rows[0]!.error);
    expect(await alarmOf(sender.id)).toBe(until + 5 * 60_000);
  });
});
