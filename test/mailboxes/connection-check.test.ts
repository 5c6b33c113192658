import { describe, expect, it } from "vitest";
import { runConnectionCheck, type ConnectionChecker, type ConnectionTarget } from "../../src/mailboxes/connection-check";
import { callJson, fileEnv, provisionAccount } from "../helpers";
import { createMailbox, storedMailbox } from "./fixtures";

function recordingChecker() {
  const targets: ConnectionTarget[] = [];
  const check: ConnectionChecker = async (target) => {
    targets.push(target);
    return { smtp: { ok: true, error: null }, imap: { ok: true, error: null } };
  };
  return { targets, check };
}

describe("the connection check of a save", () => {
  it("logs IMAP in with the stored IMAP password when only the SMTP password changes", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey, { password: "smtp-old-1", imap_user_name: "imap-login", imap_password: "imap-own-2" });
    const changed = await callJson(`/api/v1/email-accounts/${mailbox.id}`, { method: "POST", apiKey: account.apiKey, body: { password: "smtp-new-3" } });
    expect(changed.status).toBe(200);
    const { targets, check } = recordingChecker();
    // What the update hands the check: the new SMTP password, the IMAP one kept (undefined).
    await runConnectionCheck(fileEnv(), await storedMailbox(mailbox.id), { password: "smtp-new-3", imapPassword: undefined }, check);
    expect(targets).toHaveLength(1);
    expect(targets[0]!.smtp).toMatchObject({ credential: { password: "smtp-new-3" } });
    expect(targets[0]!.imap).toMatchObject({ username: "imap-login", credential: { password: "imap-own-2" } });
  });

  it("logs IMAP in with the new SMTP password when the mailbox has no IMAP password of its own", async () => {
    const account = await provisionAccount();
    const mailbox = await createMailbox(account.apiKey, { password: "smtp-old-1" });
    const { targets, check } = recordingChecker();
    await runConnectionCheck(fileEnv(), await storedMailbox(mailbox.id), { password: "smtp-new-3", imapPassword: undefined }, check);
    expect(targets[0]!.imap).toMatchObject({ credential: { password: "smtp-new-3" } });
  });
});
