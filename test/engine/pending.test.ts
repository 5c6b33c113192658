import { runInDurableObject } from "cloudflare:test";
import { eq, sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { emailAccounts } from "../../src/db/schema";
import { SendJournal } from "../../src/engine/journal";
import { PendingOutcomes } from "../../src/engine/pending";
import { claimRecords } from "../../src/engine/store";
import type { MailboxSender } from "../../src/mailbox-agent/mailbox.do";
import { senderStub } from "../../src/mailbox-agent/stub";
import { database } from "../../src/platform/db";
import type { Bindings } from "../../src/platform/env";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { campaignRow, recordsOf, setCampaign } from "../db";

const bindings = fileEnv() as unknown as Bindings;
const now = Date.now() + 60_000;

/** Three claimed records of a started campaign, and their mailbox's row. */
async function claimed() {
  const account = await provisionAccount();
  const { body: campaign } = await callJson<{ id: number }>("/api/v1/campaigns/create", { method: "POST", apiKey: account.apiKey, body: { name: "Pending" } });
  const lead_list = ["a", "b", "c"].map((name) => ({ email: `${name}@pending.example` }));
  await callJson(`/api/v1/campaigns/${campaign.id}/leads`, { method: "POST", apiKey: account.apiKey, body: { lead_list } });
  const { body: saved } = await callJson<{ id: number }>("/api/v1/email-accounts/save", {
    method: "POST",
    apiKey: account.apiKey,
    body: { from_name: "P", from_email: "p@sender.example", password: "pw", smtp_host: "smtp.sender.example", smtp_port: 587, imap_host: "imap.sender.example", imap_port: 993 },
  });
  await setCampaign(campaign.id, { status: "ACTIVE" });
  const row = await campaignRow(campaign.id);
  const { nonce, records } = await claimRecords(fileEnv().DB, { campaign: row, mailboxId: saved.id, senderDomain: "sender.example", now, limit: 3, newLeadsLeft: 3 });
  const [mailbox] = await database(fileEnv().DB).select().from(emailAccounts).where(eq(emailAccounts.id, saved.id));
  return { campaign: row, mailbox: mailbox!, nonce, ids: records.map((r) => r.recordId) };
}

/** Each record's due time, or "claimed" while its claim holds it. */
async function dueTimes(campaignId: number, ids: number[]) {
  const records = new Map((await recordsOf(campaignId)).map((r) => [r.id, r]));
  return ids.map((id) => (records.get(id)!.claimToken !== null ? "claimed" : records.get(id)!.dueAt!.getTime()));
}

describe("a claim's pending outcomes", () => {
  it("what settles while a batch is on its way waits for the next one; a batch that fails leaves what it took pending", async () => {
    const { campaign, mailbox, nonce, ids } = await claimed();
    const [a, b, c] = ids as [number, number, number];
    await runInDurableObject(senderStub(bindings, mailbox.id), async (_: MailboxSender, state: DurableObjectState) => {
      const journal = new SendJournal(state.storage.kv, () => state.storage.sync());
      const pending = new PendingOutcomes(bindings, database(bindings.DB), { campaign, mailbox, nonce, now, recordIds: ids }, journal);
      pending.settle({ kind: "released", recordId: a, dueAt: now + 1, unpin: false });
      const first = pending.store();
      pending.settle({ kind: "released", recordId: b, dueAt: now + 2, unpin: false });
      await first;
      expect(await dueTimes(campaign.id, ids), "the first batch stored only what was pending when it began").toEqual([now + 1, "claimed", "claimed"]);

      pending.settle({ kind: "released", recordId: c, dueAt: now + 3, unpin: false });
      await expect(pending.store(sql`SELECT * FROM no_such_table`)).rejects.toThrow();
      expect(await dueTimes(campaign.id, ids), "nothing of a failed batch is stored").toEqual([now + 1, "claimed", "claimed"]);
      await pending.store();
      expect(await dueTimes(campaign.id, ids), "what the failed batch took, stored by the next").toEqual([now + 1, now + 2, now + 3]);
    });
  });
});
