import { describe, expect, inject, it } from "vitest";
import { config } from "../../src/config";
import { urlPolicy } from "../../src/platform/outbound";
import { AttachmentError, fetchAttachments } from "../../src/replies/attachments";
import { sendDueReplies } from "../../src/replies/outbound";
import { ManualSessions } from "../../src/manual-mail/send";
import { MailboxLogins } from "../../src/mailboxes/login";
import { agentTokens } from "../../src/mailboxes/wake";
import { loadKeyring } from "../../src/platform/crypto";
import { database } from "../../src/platform/db";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { campaignOutboundReplies, mailboxConnected, outboundReplyRow, recordEventId, setCampaignRecords, setOutboundReply } from "../db";
import { callJson, provisionAccount, fileEnv, env } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";

const target = inject("outboundTarget");

/** A thread whose record is pinned to a mailbox whose last check passed (no mail server runs here). */
async function threadWithMailbox() {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const map = await addLeads(account.apiKey, campaign, ["t@reply.example.com"]);
  await ingestOk(account.apiKey, campaign, [
    { type: "SENT", lead_email: "t@reply.example.com", occurred_at: "2026-03-01T10:00:00Z", message_id: "<s@x>" },
    { type: "REPLY", lead_email: "t@reply.example.com", occurred_at: "2026-03-02T10:00:00Z", message_id: "<r@t>", body: "Hi" },
  ]);
  const statsId = await recordEventId(map["t@reply.example.com"]!, "REPLY");
  const mailbox = await createMailbox(account.apiKey);
  await mailboxConnected(mailbox.id, { imap: true });
  await setCampaignRecords(campaign, { emailAccountId: mailbox.id });
  return { account, campaign, statsId, mailboxId: mailbox.id };
}

const post = (apiKey: string, campaign: number, body: unknown) => callJson<{ error?: string; details?: { path: string; message: string }[]; message_id?: string }>(`/api/v1/campaigns/${campaign}/reply-email-thread`, { method: "POST", apiKey, body });

/** A TCP listener of the suite's targets, and how many connections it took. */
async function listener() {
  const { port } = (await (await fetch(`${target}/listeners`, { method: "POST" })).json()) as { port: number };
  return { port, connections: async () => ((await (await fetch(`${target}/listeners/${port}`)).json()) as { connections: number }).connections };
}

const production = () => urlPolicy(config(fileEnv()));
const development = () => urlPolicy(config({ ...env, ALLOW_INSECURE_WEBHOOKS: "true" }));

describe("reply attachments and the outbound rule (issue 23: SSRF through inbox-reply attachments)", () => {
  const internal = ["https://169.254.169.254/latest/meta-data/iam/security-credentials/", "https://127.0.0.1/", "https://[::1]/", "https://10.0.0.1/", "https://2130706433/", "https://localtest.me/x", "https://files.lan/x", "https://salvo.test/api/v1/account"];

  it("refuses every internal address of the attack pass (422) for replies sent now and later, storing nothing", async () => {
    const { account, campaign, statsId } = await threadWithMailbox();
    const later = new Date(Date.now() + 86_400_000).toISOString();
    for (const file_url of internal) {
      for (const when of [{ scheduled_time: later }, {}]) {
        const answer = await post(account.apiKey, campaign, { email_stats_id: statsId, email_body: "x", attachments: [{ file_url }], ...when });
        expect(answer.status, `${file_url} ${JSON.stringify(answer.body)}`).toBe(422);
        expect(answer.body.details?.[0]?.path, file_url).toBe("attachments.0.file_url");
      }
    }
    expect(await campaignOutboundReplies(campaign)).toEqual([]);
  });

  it("judges a stored reply's files again when it goes out: an internal one is never connected to", async () => {
    const { account, campaign, statsId, mailboxId } = await threadWithMailbox();
    const at = Date.now() + 86_400_000;
    const saved = await post(account.apiKey, campaign, {
      email_stats_id: statsId,
      email_body: "x",
      scheduled_time: new Date(at).toISOString(),
      attachments: [{ file_url: "https://files.example.com/deck.pdf" }],
    });
    expect(saved.status, JSON.stringify(saved.body)).toBe(200);
    // A reply stored before the rule (or a name that turned private since): its file now points inside.
    const inside = await listener();
    await setOutboundReply((await outboundReplyRow(saved.body.message_id!)).id, { attachments: [{ file_url: `https://127.0.0.1:${inside.port}/latest/meta-data/` }] });
    const logins = new MailboxLogins(fileEnv(), database(fileEnv().DB), await loadKeyring(config(fileEnv()).secretsKey), agentTokens(fileEnv()));
    const sessions = new ManualSessions(logins);
    await sendDueReplies(fileEnv(), logins, mailboxId, at + 60_000, at, sessions).finally(() => sessions.close());
    const row = await outboundReplyRow(saved.body.message_id!);
    expect(row.status).toBe("FAILED");
    expect(row.statusMessage).toContain("127.0.0.1 is a loopback address");
    expect(await inside.connections()).toBe(0);
  });

  it("follows redirects by hand, judging each hop: to a private address, to a name that resolves inside, to Salvo itself", async () => {
    const token = crypto.randomUUID();
    const hop = (to: string) => [{ file_url: `${target}/redirect/${token}?to=${encodeURIComponent(to)}` }];
    for (const [to, reason] of [
      ["http://169.254.169.254/latest/meta-data/", "169.254.169.254 is a link-local address"],
      ["http://10.0.0.1/", "10.0.0.1 is a private address"],
      ["http://files.10.0.0.1.nip.io/secret", "files.10.0.0.1.nip.io resolves to 10.0.0.1, a private address"],
      ["https://salvo.test/api/v1/account", "must not point to Salvo itself"],
    ] as const) {
      const refused = await fetchAttachments(hop(to), development()).catch((error: unknown) => error);
      expect(refused, to).toBeInstanceOf(AttachmentError);
      expect((refused as Error).message, to).toContain(reason);
    }
    // A loopback server is admitted only by the development switch, and there plain http too; in production neither.
    const fine = await fetchAttachments(hop(`${target}/file/${token}`), development());
    expect(new TextDecoder().decode(fine[0]!.content)).toBe("agenda: pricing, onboarding");
    const production_ = await fetchAttachments([{ file_url: `${target}/file/${token}` }], production()).catch((error: unknown) => error);
    expect((production_ as Error).message).toContain("must use https");
    expect(await (await fetch(`${target}/requests/${token}`)).json()).toEqual([
      ...Array(5).fill(`GET /redirect/${token}`),
      `GET /file/${token}`,
    ]);
  });

  it("answers a server that stalls mid-body, and one that sends too much, with an AttachmentError (400), not a crash", async () => {
    const token = crypto.randomUUID();
    const started = Date.now();
    const stalled = await fetchAttachments([{ file_url: `${target}/stall/${token}` }], development(), { timeoutMs: 300 }).catch((error: unknown) => error);
    expect(stalled).toBeInstanceOf(AttachmentError);
    expect((stalled as Error).message).toBe(`Attachment ${target}/stall/${token} could not be fetched: timed out after 300 ms`);
    expect(Date.now() - started).toBeLessThan(5_000);
    const big = await fetchAttachments([{ file_url: `${target}/big/${token}` }], development()).catch((error: unknown) => error);
    expect(big).toBeInstanceOf(AttachmentError);
    expect((big as Error).message).toBe(`Attachment ${target}/big/${token} is larger than 10 MB`);
  });
});
