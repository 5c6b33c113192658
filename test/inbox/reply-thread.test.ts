import { describe, expect, it } from "vitest";
import { campaignOutboundReplies, eventCount, mailboxConnected, outboundReplyRow, recordEventId, setCampaignRecords, setMailbox } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { createMailbox } from "../mailboxes/fixtures";

/** A thread pushed in through the events API (no mailbox of ours sent it), and its reply's stats id. */
async function thread() {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const map = await addLeads(account.apiKey, campaign, ["t@reply.example"]);
  await ingestOk(account.apiKey, campaign, [
    { type: "SENT", lead_email: "t@reply.example", occurred_at: "2026-03-01T10:00:00Z", message_id: "<s@x>" },
    { type: "REPLY", lead_email: "t@reply.example", occurred_at: "2026-03-02T10:00:00Z", message_id: "<r@t>", body: "Hi" },
  ]);
  const record = map["t@reply.example"]!;
  return { account, campaign, statsId: await recordEventId(record, "REPLY"), sentId: await recordEventId(record, "SENT") };
}

const post = (apiKey: string, campaign: number, body: unknown) => callJson(`/api/v1/campaigns/${campaign}/reply-email-thread`, { method: "POST", apiKey, body });

describe("replying in a thread from the inbox", () => {
  it("answers the contract's refusals without sending or storing anything", async () => {
    const { account, campaign, statsId } = await thread();
    const before = await eventCount(campaign);

    expect(await post(account.apiKey, campaign, { email_stats_id: 999999, email_body: "x" })).toMatchObject({ status: 404, body: { error: "Email stats not found" } });
    // No mailbox of this account sent the thread: there is nothing to send from.
    expect(await post(account.apiKey, campaign, { email_stats_id: String(statsId), email_body: "x" })).toMatchObject({ status: 400, body: { error: "Email account not found!" } });
    expect((await post(account.apiKey, campaign, { email_stats_id: statsId })).status).toBe(422);
    expect((await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "x", cc: "not-an-address" })).status).toBe(422);
    const stranger = await provisionAccount();
    expect((await post(stranger.apiKey, campaign, { email_stats_id: statsId, email_body: "x" })).status).toBe(404);

    const after = await eventCount(campaign);
    expect(after).toBe(before);
  });
});

describe("replies scheduled from the inbox", () => {
  /** The thread's record pinned to a mailbox whose last check passed (no server runs here: nothing is sent). */
  async function threadWithMailbox() {
    const world = await thread();
    const mailbox = await createMailbox(world.account.apiKey);
    await mailboxConnected(mailbox.id, { imap: true });
    await setCampaignRecords(world.campaign, { emailAccountId: mailbox.id });
    return { ...world, mailboxId: mailbox.id };
  }

  it("queues a reply for its time, shows it in the scheduled view and in reply-status, and sends nothing yet", async () => {
    const { account, campaign, statsId, mailboxId } = await threadWithMailbox();
    const when = new Date(Date.now() + 3 * 86_400_000);
    when.setUTCMilliseconds(0);
    const answer = await post(account.apiKey, campaign, {
      email_stats_id: statsId,
      email_body: "<p>Following up on Monday</p>",
      scheduled_time: when.toISOString(),
      cc: ["boss@reply.example"],
      schedule_condition: { if: "no reply" },
      attachments: [{ file_url: "https://files.example/deck.pdf", file_name: "deck.pdf" }],
    });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const { message_id, email_stats_id } = answer.body as { message_id: string; email_stats_id: string };
    // Until it goes out, the stats id is the message it answers.
    expect(email_stats_id).toBe(String(statsId));
    const status = await callJson(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(message_id)}`, { apiKey: account.apiKey });
    expect(status.body).toMatchObject({ ok: true, data: { message_id, status: "SCHEDULED", scheduled_time: when.toISOString(), email_stats_id: null, status_message: null } });
    const view = await callJson<{ messages: { email_lead_map_id: number; scheduled_time: string; scheduled_message: unknown }[] }>("/api/v1/master-inbox/scheduled", {
      method: "POST",
      apiKey: account.apiKey,
      body: {},
    });
    expect(view.body.messages).toEqual([
      expect.objectContaining({
        scheduled_time: when.toISOString(),
        scheduled_message: { email_stats_id: String(statsId), subject: "Re: ", email_body: "<p>Following up on Monday</p>" },
      }),
    ]);
    const stored = await outboundReplyRow(message_id);
    expect(stored).toMatchObject({ emailAccountId: mailboxId, inReplyTo: "<r@t>", cc: ["boss@reply.example"] });
    expect(stored.extra).toEqual({ schedule_condition: { if: "no reply" } });
    expect(await eventCount(campaign, "SENT")).toBe(1);
    // Another tenant cannot read its status.
    const stranger = await provisionAccount();
    expect((await callJson(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(message_id)}`, { apiKey: stranger.apiKey })).status).toBe(404);
  });

  it("reads a scheduled_time without a zone as UTC, and refuses one that is no ISO 8601 time with the contract's 422", async () => {
    const { account, campaign, statsId } = await threadWithMailbox();
    const when = new Date(Date.now() + 2 * 86_400_000);
    when.setUTCSeconds(0, 0);
    const answer = await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "<p>Hi</p>", scheduled_time: when.toISOString().slice(0, 16) });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    const { message_id } = answer.body as { message_id: string };
    const status = await callJson(`/api/v1/master-inbox/reply-status?message_id=${encodeURIComponent(message_id)}`, { apiKey: account.apiKey });
    expect(status.body).toMatchObject({ data: { status: "SCHEDULED", scheduled_time: when.toISOString() } });

    const before = await campaignOutboundReplies(campaign);
    const wrong = await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "<p>Hi</p>", scheduled_time: "next monday" });
    expect(wrong.status).toBe(422);
    expect(wrong.body).toEqual({ error: "Validation failed", details: [{ path: "scheduled_time", message: "Must be an ISO 8601 date-time" }] });
    expect(await campaignOutboundReplies(campaign)).toEqual(before);
  });

  it("answers the thread's newest message unless the caller names one, whichever message the stats id names", async () => {
    const { account, campaign, mailboxId, sentId: sent } = await threadWithMailbox();
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const byDefault = await post(account.apiKey, campaign, { email_stats_id: sent, email_body: "<p>Hello again</p>", scheduled_time: later });
    expect(byDefault.status, JSON.stringify(byDefault.body)).toBe(200);
    expect(await outboundReplyRow((byDefault.body as { message_id: string }).message_id)).toMatchObject({ emailAccountId: mailboxId, inReplyTo: "<r@t>", references: "<s@x> <r@t>" });
    const named = await post(account.apiKey, campaign, { email_stats_id: sent, email_body: "<p>About the first</p>", scheduled_time: later, reply_message_id: "<s@x>" });
    expect(await outboundReplyRow((named.body as { message_id: string }).message_id)).toMatchObject({ inReplyTo: "<s@x>", references: "<r@t> <s@x>" });
  });

  it("refuses attachments that are not https, too many, and a mailbox that fails its checks", async () => {
    const { account, campaign, statsId, mailboxId } = await threadWithMailbox();
    const later = new Date(Date.now() + 86_400_000).toISOString();
    const file = { file_url: "https://files.example/a.pdf" };
    expect((await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "x", scheduled_time: later, attachments: [{ file_url: "http://files.example/a.pdf" }] })).status).toBe(422);
    expect((await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "x", scheduled_time: later, attachments: Array(6).fill(file) })).status).toBe(422);
    await setMailbox(mailboxId, { isSmtpSuccess: false });
    expect(await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "x", scheduled_time: later })).toMatchObject({ status: 400, body: { error: "Email account not found!" } });
    expect(await campaignOutboundReplies(campaign)).toEqual([]);
  });

  it("lets a client key answer its campaign's thread from the account-wide mailbox the owner attached to it, and from no other", async () => {
    const account = await provisionAccount();
    const clientKey = (await createClientKey(account.apiKey, await createClient(account.apiKey))).api_key;
    const campaign = await createCampaign(clientKey);
    const map = await addLeads(clientKey, campaign, ["c@reply.example"]);
    await ingestOk(clientKey, campaign, [
      { type: "SENT", lead_email: "c@reply.example", occurred_at: "2026-03-01T10:00:00Z", message_id: "<cs@x>" },
      { type: "REPLY", lead_email: "c@reply.example", occurred_at: "2026-03-02T10:00:00Z", message_id: "<cr@t>", body: "Hi" },
    ]);
    const statsId = await recordEventId(map["c@reply.example"]!, "REPLY");
    // The owner's own mailbox (no client), attached to the client's campaign: the campaign sends through it.
    const mailbox = await createMailbox(account.apiKey);
    await mailboxConnected(mailbox.id, { imap: true });
    const attached = await callJson(`/api/v1/campaigns/${campaign}/email-accounts`, { method: "POST", apiKey: account.apiKey, body: { email_account_ids: [mailbox.id] } });
    expect(attached.status).toBe(200);
    await setCampaignRecords(campaign, { emailAccountId: mailbox.id });
    const later = new Date(Date.now() + 86_400_000).toISOString();

    const answer = await post(clientKey, campaign, { email_stats_id: statsId, email_body: "<p>Thanks</p>", scheduled_time: later });
    expect(answer.status, JSON.stringify(answer.body)).toBe(200);
    expect(await outboundReplyRow((answer.body as { message_id: string }).message_id)).toMatchObject({ emailAccountId: mailbox.id, inReplyTo: "<cr@t>" });

    // Detached, it is the owner's alone again.
    await callJson(`/api/v1/campaigns/${campaign}/email-accounts/${mailbox.id}`, { method: "DELETE", apiKey: account.apiKey });
    expect(await post(clientKey, campaign, { email_stats_id: statsId, email_body: "x", scheduled_time: later })).toMatchObject({ status: 400, body: { error: "Email account not found!" } });
  });
});
