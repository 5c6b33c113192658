import { describe, expect, it } from "vitest";
import { parseMessage } from "../../src/mail/parsed";
import { recordInbound } from "../../src/replies/inbound";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { addMessages, eventCount, eventsOf, recordRow } from "../db";
import { createClient, provisionAccount, fileEnv } from "../helpers";
import { createMailbox, type EmailAccount } from "../mailboxes/fixtures";

/**
 * Issue 23: a message a mailbox receives joins a campaign thread only when that thread is within
 * the mailbox's client scope (the one tenancy rule, with the mailbox as the one who reads), or when
 * the mailbox itself sent the message it answers. Mail that reached client Y's mailbox never shows
 * in client X's inbox.
 */

const RECEIVED = Date.parse("2026-04-02T09:30:00.000Z");

function answer(to: string, inReplyTo: string): string {
  return [
    "From: lead@x-prospect.example",
    `To: ${to}`,
    "Subject: Re: Hello",
    `Message-ID: <${crypto.randomUUID()}@x-prospect.example>`,
    `In-Reply-To: ${inReplyTo}`,
    `References: ${inReplyTo}`,
    "Date: Thu, 02 Apr 2026 09:30:00 +0000",
    "MIME-Version: 1.0",
    'Content-Type: text/plain; charset="utf-8"',
    "",
    "Private words meant for whoever wrote to me.",
  ].join("\r\n");
}

/** A campaign email as the engine leaves it: a sent message row of the record, from `mailboxId`. */
async function sentMessage(campaign: number, recordId: number, mailboxId: number, sentAt = new Date(RECEIVED - 3_600_000)): Promise<string> {
  const messageId = `<${crypto.randomUUID()}@x-sender.example>`;
  const record = await recordRow(recordId);
  await addMessages([
    { accountId: record.accountId, campaignId: record.campaignId, campaignLeadId: recordId, step: 1, emailAccountId: mailboxId, messageId, status: "sent", attempts: 1, toEmail: "lead@x-prospect.example", sentAt, createdAt: sentAt, updatedAt: sentAt },
  ]);
  return messageId;
}

const replies = (campaign: number) => eventCount(campaign, "REPLY");

describe("matching a received message to a campaign thread", () => {
  it("keeps client Y's mailbox out of client X's threads, unless that mailbox sent the message answered", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const clientX = await createClient(k, "X", "x@clients.example");
    const clientY = await createClient(k, "Y", "y@clients.example");
    const ofX = await createMailbox(k, { client_id: clientX });
    const ofY = await createMailbox(k, { client_id: clientY });
    const owners = await createMailbox(k);
    const campaign = await createCampaign(k, { client_id: clientX });
    const records = await addLeads(k, campaign, ["lead@x-prospect.example"]);
    const record = records["lead@x-prospect.example"]!;
    const fromX = await sentMessage(campaign, record, ofX.id);
    const mailbox = (row: EmailAccount, clientId: number | null) => ({ id: row.id, accountId: account.id, clientId, fromEmail: row.from_email });
    const read = async (row: EmailAccount, clientId: number | null, inReplyTo: string, at: number) =>
      recordInbound(fileEnv(), mailbox(row, clientId), [await parseMessage(answer(row.from_email, inReplyTo))], at);

    // Y's mailbox got an answer to X's email: it stays Y's (untracked), never X's conversation.
    expect(await read(ofY, clientY, fromX, RECEIVED)).toMatchObject({ replies: 0, untracked: 1 });
    expect(await replies(campaign)).toBe(0);
    // The mailbox that wrote, and the owner's own (it sees every client), both join the thread.
    expect(await read(ofX, clientX, fromX, RECEIVED + 1000)).toMatchObject({ replies: 1, untracked: 0 });
    expect(await read(owners, null, fromX, RECEIVED + 2000)).toMatchObject({ replies: 1, untracked: 0 });
    expect(await replies(campaign)).toBe(2);

    // The owner attached Y's mailbox to X's campaign and it sent step 2: answers to what it sent are X's thread.
    const secondRecord = (await addLeads(k, campaign, ["second@x-prospect.example"]))["second@x-prospect.example"]!;
    const fromY = await sentMessage(campaign, secondRecord, ofY.id);
    expect(await read(ofY, clientY, fromY, RECEIVED + 3000)).toMatchObject({ replies: 1, untracked: 0 });
    expect(await replies(campaign)).toBe(3);
  });

  it("dates a reply after the email it answers when its Date header, in whole seconds, reads earlier", async () => {
    const account = await provisionAccount();
    const row = await createMailbox(account.apiKey);
    const campaign = await createCampaign(account.apiKey);
    const record = (await addLeads(account.apiKey, campaign, ["lead@x-prospect.example"]))["lead@x-prospect.example"]!;
    // Sent 400 ms into the second the lead's Date header names.
    const sentAt = RECEIVED + 400;
    const ours = await sentMessage(campaign, record, row.id, new Date(sentAt));
    const mailbox = { id: row.id, accountId: account.id, clientId: null, fromEmail: row.from_email };
    expect(await recordInbound(fileEnv(), mailbox, [await parseMessage(answer(row.from_email, ours))], RECEIVED + 2000)).toMatchObject({ replies: 1 });
    const [reply] = await eventsOf(campaign, "REPLY");
    expect(reply!.occurredAt.getTime()).toBe(sentAt + 1);

    // Never in the future, though: an email dated after the reading (another clock) leaves the reply at the reading.
    const second = (await addLeads(account.apiKey, campaign, ["second@x-prospect.example"]))["second@x-prospect.example"]!;
    const ahead = await sentMessage(campaign, second, row.id, new Date(RECEIVED + 86_400_000));
    expect(await recordInbound(fileEnv(), mailbox, [await parseMessage(answer(row.from_email, ahead))], RECEIVED + 3000)).toMatchObject({ replies: 1 });
    const later = (await eventsOf(campaign, "REPLY")).find((event) => event.campaignLeadId === second)!;
    expect(later.occurredAt.getTime()).toBe(RECEIVED + 3000);
  });
});
