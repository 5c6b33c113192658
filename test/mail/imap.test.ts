import { describe, expect, inject, it } from "vitest";
import { checkImap, withImapSession, type ImapSettings } from "../../src/mail/imap";
import { imapString, parseValues } from "../../src/mail/imap-protocol";
import { sendMail } from "../../src/mail/smtp";

const lab = inject("mailLab");
const scriptedSmtp = inject("scriptedSmtp");
const scriptedImap = inject("scriptedImap");

const account = (local: string) => {
  const found = lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`);
  if (!found) throw new Error(`no lab mailbox ${local}`);
  return found;
};
const sender = account("sender3");
const lead = account("lead2");
const secure = { allowPlain: false };

function settings(endpoint: { host: string; port: number; security: ImapSettings["security"] }, user = lead, password = user.password): ImapSettings {
  return { host: endpoint.host, port: endpoint.port, security: endpoint.security, username: user.email, password };
}

const scripted = (port: number, security: ImapSettings["security"] = "plain"): ImapSettings => ({
  host: "127.0.0.1",
  port,
  security,
  username: "someone@scripted.test",
  password: "x",
});

describe("checkImap against the mail lab", () => {
  it("logs in and selects INBOX over STARTTLS and over implicit TLS", async () => {
    expect(lab.imap.security).toBe("starttls");
    expect(lab.imap_tls.security).toBe("tls");
    expect(await checkImap(settings(lab.imap), secure)).toEqual({ ok: true });
    expect(await checkImap(settings(lab.imap_tls), secure)).toEqual({ ok: true });
  });

  it("fails a wrong password as auth_failed with Dovecot's own text", async () => {
    for (const endpoint of [lab.imap, lab.imap_tls]) {
      expect(await checkImap(settings(endpoint, lead, "wrong-password"), secure)).toEqual({
        ok: false,
        failure: { kind: "auth_failed", text: "[AUTHENTICATIONFAILED] Authentication failed." },
      });
    }
  });

  it("sends a password that needs a literal (non-ASCII, quotes, backslash) as one, and the server judges it", async () => {
    // A literal the server did not take would be a BAD (syntax), not an authentication failure.
    expect(await checkImap(settings(lab.imap_tls, lead, 'pässwörd "quoted" \\ back'), secure)).toEqual({
      ok: false,
      failure: { kind: "auth_failed", text: "[AUTHENTICATIONFAILED] Authentication failed." },
    });
    expect(imapString("pässwörd")).toHaveProperty("literal");
  });

  it("refuses a STARTTLS endpoint that offers no STARTTLS, without logging in in clear", async () => {
    // The scripted server accepts any LOGIN: in clear, with plain allowed, the same check passes.
    expect(await checkImap(scripted(scriptedImap.noStarttls), { allowPlain: true })).toEqual({ ok: true });
    expect(await checkImap(scripted(scriptedImap.noStarttls, "starttls"), secure)).toEqual({
      ok: false,
      failure: { kind: "insecure", text: "the server does not offer STARTTLS; refusing to continue in clear (it offers IMAP4REV1 AUTH=PLAIN)" },
    });
  });

  it("refuses plain IMAP unless the caller allows it", async () => {
    expect(await checkImap(scripted(scriptedImap.noStarttls), secure)).toEqual({
      ok: false,
      failure: { kind: "insecure", text: "unencrypted IMAP is refused: use implicit TLS or STARTTLS" },
    });
  });

  it("reports a server that says BYE and closes with the server's text", async () => {
    const started = Date.now();
    expect(await checkImap(scripted(scriptedImap.bye), { allowPlain: true })).toEqual({
      ok: false,
      failure: { kind: "connection", text: "the server ended the session: [UNAVAILABLE] Server shutting down" },
    });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("gives up on a server that never answers after the timeout", async () => {
    const started = Date.now();
    const result = await checkImap(scripted(scriptedSmtp.silent, "tls"), { allowPlain: false, timeoutMs: 500 });
    // Implicit TLS: the silent server never completes the handshake, so the connection never opens.
    expect(result).toEqual({ ok: false, failure: { kind: "connection", text: expect.stringMatching(/^timed out after 500 ms waiting for /) } });
    const plain = await checkImap(scripted(scriptedSmtp.silent), { allowPlain: true, timeoutMs: 500 });
    expect(plain).toEqual({ ok: false, failure: { kind: "connection", text: "timed out after 500 ms waiting for the greeting" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(900);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("reports a greeting that is not IMAP (an SMTP server) as a connection failure", async () => {
    const result = await checkImap(scripted(scriptedSmtp.hangup), { allowPlain: true });
    expect(result).toEqual({ ok: false, failure: { kind: "connection", text: "not an IMAP greeting: 220 scripted.test ESMTP" } });
  });

  it("fails as a connection failure when nothing listens", async () => {
    const result = await checkImap({ ...settings(lab.imap_tls), port: 1 }, secure);
    expect(result).toMatchObject({ ok: false, failure: { kind: "connection" } });
  });
});

describe("ImapSession against the mail lab", () => {
  it("finds a message by header and fetches it, literal and all", async () => {
    const messageId = `<${crypto.randomUUID()}@salvo.test>`;
    const sent = await sendMail(
      { host: lab.smtp_tls.host, port: lab.smtp_tls.port, security: "tls", username: sender.email, password: sender.password },
      { from: sender.email, to: lead.email, subject: "Fetched back", text: "Hello from the session test.", headers: { "Message-ID": messageId } },
      secure,
    );
    expect(sent.ok).toBe(true);

    const result = await withImapSession(settings(lab.imap), secure, async (session) => {
      await session.login();
      expect(session.capabilities?.has("IMAP4REV1")).toBe(true);
      for (let attempt = 0; attempt < 40; attempt += 1) {
        const inbox = await session.select("INBOX", { readOnly: true });
        expect(inbox.readOnly).toBe(true);
        expect(inbox.uidValidity).toBeGreaterThan(0);
        const { untagged } = await session.command(["UID", "SEARCH", "HEADER", "Message-ID", imapString(messageId)]);
        const uid = untagged.map((response) => /^SEARCH (\d+)/.exec(response.text)?.[1]).find(Boolean);
        if (uid) {
          const fetched = await session.command(["UID", "FETCH", uid, "(UID BODY.PEEK[HEADER.FIELDS (MESSAGE-ID)] BODY.PEEK[])"]);
          await session.logout();
          return fetched.untagged.map(parseValues);
        }
        await new Promise((resolve) => setTimeout(resolve, 250));
      }
      throw new Error("the message never arrived");
    });
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    const [[, verb, items]] = result.value as [[string, string, (string | Uint8Array)[]]];
    expect(verb).toBe("FETCH");
    const item = (name: string) => items[items.indexOf(name) + 1];
    expect(new TextDecoder().decode(item("BODY[HEADER.FIELDS (MESSAGE-ID)]") as Uint8Array).trim()).toBe(`Message-ID: ${messageId}`);
    const raw = new TextDecoder().decode(item("BODY[]") as Uint8Array);
    expect(raw).toContain(`Message-ID: ${messageId}`);
    expect(raw).toContain("Hello from the session test.");
  });

  it("reports a NO to a command with the server's text and keeps the session usable", async () => {
    const result = await withImapSession(settings(lab.imap_tls), secure, async (session) => {
      await session.login();
      const missing = await session.select("No Such Folder").catch((error: unknown) => error);
      const inbox = await session.select("INBOX");
      return { missing, inbox };
    });
    expect(result).toMatchObject({
      ok: true,
      value: { missing: { failure: { kind: "rejected", text: expect.stringMatching(/^Mailbox doesn.t exist: No Such Folder/) } }, inbox: { readOnly: false } },
    });
  });
});
