import { eq } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { emailAccounts } from "../../src/db/schema";
import { runConnectionCheck } from "../../src/mailboxes/connection-check";
import { database } from "../../src/platform/db";
import { callJson, createClient, provisionAccount, fileEnv } from "../helpers";
import { createMailbox } from "../mailboxes/fixtures";
import { deliveriesOf, RECEIVER } from "./fixtures";

async function hook(apiKey: string, body: Record<string, unknown>) {
  const { status, body: answer } = await callJson<{ id: number }>("/api/v1/webhook/create", {
    method: "POST",
    apiKey,
    body: { webhook_url: RECEIVER, force_create: true, ...body },
  });
  if (status !== 200) throw new Error(`webhook create failed: ${status} ${JSON.stringify(answer)}`);
  return answer.id;
}

const refused = async () => ({ smtp: { ok: false, error: "535 5.7.8 Authentication failed" }, imap: { ok: true, error: null } });

describe("EMAIL_ACCOUNT_DISCONNECTED", () => {
  it("goes to the user webhooks and the mailbox's client's when a working mailbox's check fails, once", async () => {
    const account = await provisionAccount();
    const k = account.apiKey;
    const clientA = await createClient(k, "A", "a@d.example");
    const clientB = await createClient(k, "B", "b@d.example");
    const mailbox = await createMailbox(k, { client_id: clientA });
    const user = await hook(k, { association_type: "user", event_types: ["EMAIL_ACCOUNT_DISCONNECTED"] });
    const forA = await hook(k, { association_type: "client", client_id: clientA, event_types: ["EMAIL_ACCOUNT_DISCONNECTED"] });
    const forB = await hook(k, { association_type: "client", client_id: clientB, event_types: ["EMAIL_ACCOUNT_DISCONNECTED"] });
    const otherKind = await hook(k, { association_type: "user", event_types: ["UNTRACKED_REPLIES"] });
    const db = database(fileEnv().DB);
    // A check that passed earlier.
    await db.update(emailAccounts).set({ isSmtpSuccess: true, isImapSuccess: true }).where(eq(emailAccounts.id, mailbox.id));
    const working = (await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailbox.id)).get())!;

    await runConnectionCheck(fileEnv(), working, { password: "p", imapPassword: "p" }, refused);
    // A second failing check (from the stale row, as a racing check would have it) announces nothing more.
    await runConnectionCheck(fileEnv(), working, { password: "p", imapPassword: "p" }, refused);

    for (const id of [user, forA]) {
      const deliveries = await deliveriesOf(id);
      expect(deliveries.map((d) => d.event_type)).toEqual(["EMAIL_ACCOUNT_DISCONNECTED"]);
      expect(JSON.parse(deliveries[0]!.payload)).toMatchObject({
        event_type: "EMAIL_ACCOUNT_DISCONNECTED",
        email_account_id: mailbox.id,
        from_email: mailbox.from_email,
        smtp_failure_error: "535 5.7.8 Authentication failed",
        imap_failure_error: null,
        time: expect.stringMatching(/Z$/),
        client_id: clientA,
        campaign_id: null,
      });
    }
    for (const id of [forB, otherKind]) expect(await deliveriesOf(id)).toEqual([]);
    const stored = (await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailbox.id)).get())!;
    expect(stored).toMatchObject({ isSmtpSuccess: false, smtpFailureError: "535 5.7.8 Authentication failed" });
  });

  it("is not sent for a mailbox that never worked", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const user = await hook(account.apiKey, { association_type: "user", event_types: ["EMAIL_ACCOUNT_DISCONNECTED"] });
    const db = database(fileEnv().DB);
    const row = (await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailbox.id)).get())!;
    await runConnectionCheck(fileEnv(), row, { password: "p", imapPassword: "p" }, refused);
    expect(await deliveriesOf(user)).toEqual([]);
  });

  it("fires once more when a failing mailbox becomes disconnected (with its reason), never again until a check passes", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey);
    const user = await hook(account.apiKey, { association_type: "user", event_types: ["EMAIL_ACCOUNT_DISCONNECTED"] });
    const db = database(fileEnv().DB);
    await db.update(emailAccounts).set({ isSmtpSuccess: true, isImapSuccess: true }).where(eq(emailAccounts.id, mailbox.id));
    const row = async () => (await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailbox.id)).get())!;
    const secrets = { password: "p", imapPassword: "p" };
    const timeout = async () => ({ smtp: { ok: false, error: "timed out after 10000 ms waiting for the greeting" }, imap: { ok: true, error: null } });
    const rejected = async () => ({ smtp: { ok: false, error: "535 5.7.139 Authentication unsuccessful, SmtpClientAuthentication is disabled for the Tenant.", refused: true }, imap: { ok: true, error: null } });
    const passes = async () => ({ smtp: { ok: true, error: null }, imap: { ok: true, error: null } });

    await runConnectionCheck(fileEnv(), await row(), secrets, timeout);
    expect((await row()).disconnectCode).toBeNull();
    await runConnectionCheck(fileEnv(), await row(), secrets, rejected);
    expect(await row()).toMatchObject({ disconnectCode: "smtp_auth_disabled", isSmtpSuccess: false });
    await runConnectionCheck(fileEnv(), await row(), secrets, rejected);
    await runConnectionCheck(fileEnv(), await row(), secrets, timeout);
    const payloads = (await deliveriesOf(user)).map((d) => JSON.parse(d.payload) as Record<string, unknown>);
    expect(payloads.map((p) => [p.needs_reconnect, (p.disconnect_reason as { code: string } | null)?.code ?? null])).toEqual([
      [false, null],
      [true, "smtp_auth_disabled"],
    ]);
    expect((payloads[1]!.disconnect_reason as { message: string }).message).toMatch(/Set-CASMailbox/);

    // A passing check ends the disconnect; the next refusal announces again.
    await runConnectionCheck(fileEnv(), await row(), secrets, passes);
    expect(await row()).toMatchObject({ disconnectCode: null, disconnectMessage: null, isSmtpSuccess: true });
    await runConnectionCheck(fileEnv(), await row(), secrets, rejected);
    expect(await deliveriesOf(user)).toHaveLength(3);
  });
});
