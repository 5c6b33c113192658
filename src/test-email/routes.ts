import { createRoute, z } from "@hono/zod-openapi";
import { settingsOf } from "../schedule/settings";
import { composeEmail, stepContent } from "../engine/compose";
import { emailAddress } from "../mail/address";
import { manualMailDoor } from "../manual-mail/send";
import { connectionUsable, type MailboxRow } from "../mailboxes/rules";
import { campaignMailboxes, findMailbox } from "../mailboxes/store";
import { findLeadRecord } from "../platform/access";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, pathId } from "../platform/openapi";
import type { Principal } from "../platform/principal";
import { loadSequence } from "../sequences/store";
import { earlierSends, leadFields } from "./store";

const CANNOT_SEND = "The email account cannot send: it is suspended, failing its connection check, or has no password";
const NO_SENDER =
  "No email account of the campaign can send: attach one that passes its connection check, or name one in selectedEmailAccountId";

const SendTestEmail = z
  .object({
    leadId: BodyId.openapi({ description: "The lead whose fields fill the email: a lead of the campaign (a number or its decimal string)" }),
    sequenceNumber: z.number().int().min(1).max(1000).openapi({ description: "The step to send (1 for the first email)" }),
    selectedEmailAccountId: BodyId.nullish().openapi({
      description: "The mailbox to send from; absent: the lead's own mailbox in the campaign, else the campaign's first that can send",
    }),
    customEmailAddress: emailAddress().nullish().openapi({ description: "Where to send the test; absent: the lead's own address" }),
  })
  .openapi("SendTestEmail");

const TestEmailSent = z
  .object({
    ok: z.boolean(),
    success: z.boolean(),
    message: z.string(),
    message_id: z.string(),
    from_email: z.string(),
    to_email: z.string(),
    subject: z.string(),
  })
  .openapi("TestEmailSent");

const sendTestEmail = createRoute({
  method: "post",
  path: "/api/v1/campaigns/{campaign_id}/send-test-email",
  operationId: "sendCampaignTestEmail",
  description: "Sends step `sequenceNumber` as the lead `leadId` would get it (their variant, spintax and fields, the mailbox's signature, " +
    "threaded on what they were already sent) to `customEmailAddress`, or to the lead. Nothing is recorded: no message, event, " +
    "webhook or analytics, no tracking, and the unsubscribe link is a mailto. From `selectedEmailAccountId`, else the lead's " +
    "mailbox in the campaign, else its first that can send (none → 400). Unknown step → 404; the lead unsubscribed (with no " +
    "`customEmailAddress`), the recipient block-listed or unsubscribed → 400; the mail server refusing → 502 with its words. Sent by the mailbox's " +
    "object: within its gap (`time_to_wait_in_mins`) and its server's hold (else 400 naming when it may send) and its manual allowance (as many deliveries a UTC day as its " +
    "daily cap, apart from campaign emails); counted in its `daily_sent_count`.",
  tags: ["Campaigns"],
  summary: "Send one step of the sequence, filled with a lead's fields, as a test (nothing is recorded)",
  security: API_KEY_SECURITY,
  request: { params: z.object({ campaign_id: pathId("campaign_id") }), body: jsonBody(SendTestEmail, { leadId: 17, sequenceNumber: 1, customEmailAddress: "me@yourdomain.example" }) },
  responses: {
    200: json(TestEmailSent, "The mail server took the test email"),
    ...errorResponses(400, 401, 404, 422, 429, 502),
  },
});

function canSend(mailbox: MailboxRow): boolean {
  return !mailbox.isSuspended && connectionUsable(mailbox);
}

/** The named mailbox (any the caller may see), else the record's own one in the campaign, else the campaign's first that can send. */
async function chooseSender(db: Database, principal: Principal, campaignId: number, pinned: number | null, selected: number | null): Promise<MailboxRow> {
  if (selected !== null) {
    const mailbox = await findMailbox(db, principal, selected);
    if (!canSend(mailbox)) throw ApiError.badRequest(CANNOT_SEND);
    return mailbox;
  }
  const usable = (await campaignMailboxes(db, campaignId)).filter(canSend);
  const mailbox = usable.find((m) => m.id === pinned) ?? usable[0];
  if (!mailbox) throw ApiError.badRequest(NO_SENDER);
  return mailbox;
}

export const testEmailRoutes = createRouter();

testEmailRoutes.openapi(sendTestEmail, async (c) => {
  const principal = c.get("principal");
  const body = c.req.valid("json");
  const db = database(c.env.DB);
  const { campaign, record } = await findLeadRecord(db, principal, c.req.valid("param").campaign_id, body.leadId);
  const mailbox = await chooseSender(db, principal, campaign.id, record.emailAccountId, body.selectedEmailAccountId ?? null);
  const [sequence, lead] = await Promise.all([loadSequence(db, campaign.id), leadFields(db, record.leadId)]);
  const content = sequence.find((s) => s.step.seqNumber === body.sequenceNumber);
  if (!content) throw ApiError.notFound(`The campaign has no step ${body.sequenceNumber}`);
  if (!lead) throw ApiError.notFound("Lead not found in campaign");
  const custom = body.customEmailAddress?.toLowerCase() ?? null;
  // A test to the lead's own address is still an email to that person: their opt-out and the block list hold.
  if (custom === null && lead.isUnsubscribed) throw ApiError.badRequest("The lead has unsubscribed: send the test to customEmailAddress instead");
  const to = custom ?? lead.fields.email;

  const domain = mailbox.fromEmail.split("@")[1]!;
  const shared = {
    recordId: record.id,
    spintaxIndex: record.spintaxModuloIndex,
    lead: lead.fields,
    sender: { fromName: mailbox.fromName, fromEmail: mailbox.fromEmail, signature: mailbox.signature, replyTo: mailbox.differentReplyToAddress },
    settings: settingsOf(campaign.settings),
    // No tracking and a mailto unsubscribe: a test must not count as an open, a click or an opt-out.
    unsubscribeUrl: `mailto:${mailbox.fromEmail}?subject=unsubscribe`,
    track: async (html: string) => html,
  };
  const messageId = `<test-email-${crypto.randomUUID().replaceAll("-", "")}@${domain}>`;
  let thread = (await earlierSends(db, record.id, content.step.seqNumber)).map((m) => ({ messageId: m.messageId, subject: m.subject }));
  const first = sequence[0]!;
  const preview = thread.length === 0 && first !== content;
  if (preview) {
    // Nothing was sent to this lead yet: a follow-up without a subject shows "Re: <the first step's subject>" all the same.
    const opening = await composeEmail({ ...shared, step: stepContent(first.step, first.variants), thread: [], messageId });
    thread = [{ messageId, subject: opening.subject }];
  }
  const composed = await composeEmail({ ...shared, step: stepContent(content.step, content.variants), thread, messageId });
  const message = composed.message;
  if (preview) {
    delete message.headers?.["In-Reply-To"];
    delete message.headers?.References;
  }
  if (custom !== null) message.to = { email: custom };
  // Through the mailbox's object, under the manual-send rule (src/manual-mail/rules.ts): block list and
  // opt-outs, the mailbox's gap and its server's hold (a test email is not queued: refused until they end) and its allowance.
  const outcome = await manualMailDoor(c.env, mailbox.id).sendManualEmail({
    kind: "test_email",
    mailboxId: mailbox.id,
    scope: { accountId: principal.accountId, clientId: campaign.clientId },
    message,
    cc: [],
    bcc: [],
    ownBcc: false,
  });
  if (!outcome.ok) {
    if (outcome.kind === "server") throw new ApiError(502, { error: `The mail server did not take the test email: ${outcome.message}` });
    throw ApiError.badRequest(outcome.kind === "mailbox" ? CANNOT_SEND : outcome.message);
  }
  return c.json(
    { ok: true, success: true, message: "Test email sent successfully", message_id: messageId, from_email: mailbox.fromEmail, to_email: to, subject: composed.subject },
    200,
  );
});
