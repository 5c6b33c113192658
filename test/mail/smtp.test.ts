import { describe, expect, inject, it } from "vitest";
import { LAB_HOSTS } from "./lab-mailboxes";
import { checkSmtp, outgoing, sendMail, SmtpSender, type Envelope, type Outgoing, type SmtpSettings } from "../../src/mail/smtp";

const lab = inject("mailLab");
const reader = inject("mailReader");
const scripted = inject("scriptedSmtp");

const account = (local: string) => {
  const found = lab.mailboxes.find((m) => m.email === `${local}@lab.salvo.test`);
  if (!found) throw new Error(`no lab mailbox ${local}`);
  return found;
};
const sender = account("sender1");
const lead = account("lead1");
const secure = { allowPlain: false, outbound: LAB_HOSTS };

function settings(endpoint: { host: string; port: number; security: SmtpSettings["security"] }, password = sender.password): SmtpSettings {
  return { host: endpoint.host, port: endpoint.port, security: endpoint.security, username: sender.email, password };
}

async function readBack(user: string, messageId: string): Promise<string> {
  const response = await fetch(`${reader}/message?${new URLSearchParams({ user, message_id: messageId })}`);
  expect(response.status, `message ${messageId} in ${user}'s INBOX`).toBe(200);
  return response.text();
}

/** The message's header block, unfolded, as name (lower case) to values. */
function headersOf(raw: string): Map<string, string[]> {
  const block = raw.split("\r\n\r\n")[0]!.replace(/\r\n[ \t]+/g, " ");
  const map = new Map<string, string[]>();
  for (const line of block.split("\r\n")) {
    const colon = line.indexOf(":");
    const name = line.slice(0, colon).toLowerCase();
    map.set(name, [...(map.get(name) ?? []), line.slice(colon + 1).trim()]);
  }
  return map;
}

/** RFC 2047 B encoded-words back to text (the unfolding above already joined adjacent words with a space). */
const decodeWords = (value: string) =>
  value.replace(/=\?UTF-8\?B\?([^?]*)\?=(?: (?==\?))?/g, (_, b64: string) =>
    new TextDecoder().decode(Uint8Array.from(atob(b64), (c) => c.charCodeAt(0))),
  );

const unique = () => crypto.randomUUID();

describe("sendMail against the mail lab", () => {
  it("delivers a multipart message over STARTTLS with our Message-ID, List-Unsubscribe and threading headers", async () => {
    const id = unique();
    const messageId = `<${id}@salvo.test>`;
    const first = `<first-${id}@salvo.test>`;
    const result = await sendMail(
      settings(lab.smtp),
      {
        from: { email: sender.email, name: "Zoë from Salvo" },
        to: lead.email,
        subject: `Re: Quick question ✔ ${id}`,
        text: "Hi Ann,\n.this line starts with a dot\nBye\n",
        html: "<p>Hi Ann,</p>\n<p>Ünïcode &amp; a long line " + "x".repeat(200) + "</p>",
        headers: {
          "Message-ID": messageId,
          "List-Unsubscribe": `<https://t.salvo.test/u/${id}>`,
          "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
          "In-Reply-To": first,
          References: first,
        },
      },
      secure,
    );
    expect(result).toMatchObject({ ok: true, messageId, reply: { code: 250 } });

    const raw = await readBack(lead.email, messageId);
    const headers = headersOf(raw);
    expect(headers.get("message-id")).toEqual([messageId]);
    expect(decodeWords(headers.get("subject")![0]!)).toBe(`Re: Quick question ✔ ${id}`);
    expect(decodeWords(headers.get("from")![0]!)).toBe(`Zoë from Salvo <${sender.email}>`);
    expect(headers.get("list-unsubscribe")).toEqual([`<https://t.salvo.test/u/${id}>`]);
    expect(headers.get("list-unsubscribe-post")).toEqual(["List-Unsubscribe=One-Click"]);
    expect(headers.get("in-reply-to")).toEqual([first]);
    expect(headers.get("references")).toEqual([first]);
    expect(headers.get("content-type")?.[0]).toMatch(/^multipart\/alternative; boundary=/);
    // Postfix records how the message arrived: ESMTPSA is ESMTP over TLS with AUTH.
    expect(raw).toMatch(/with ESMTPSA id/);
    expect(raw).toContain("Content-Type: text/plain; charset=UTF-8");
    expect(raw).toContain("Content-Type: text/html; charset=UTF-8");
    // The dot line arrived intact (quoted-printable keeps a leading dot as =2E).
    expect(raw).toContain("=2Ethis line starts with a dot");
    expect(raw.split("\r\n").every((line) => line.length <= 998)).toBe(true);
  });

  it("delivers a text-only message over implicit TLS as a single text/plain part", async () => {
    const messageId = `<${unique()}@salvo.test>`;
    const result = await sendMail(
      settings(lab.smtp_tls),
      { from: sender.email, to: lead.email, subject: "Plain text only", text: "Just text.", headers: { "Message-ID": messageId } },
      secure,
    );
    expect(result).toMatchObject({ ok: true, messageId });
    const raw = await readBack(lead.email, messageId);
    expect(headersOf(raw).get("content-type")).toEqual(["text/plain; charset=UTF-8"]);
    expect(raw).not.toContain("multipart");
    expect(raw).toMatch(/with ESMTPSA id/);
  });

  it("makes a Message-ID on the sender's domain when the caller gives none", async () => {
    const result = await sendMail(settings(lab.smtp_tls), { from: sender.email, to: lead.email, subject: "No id", text: "x" }, secure);
    expect(result.ok).toBe(true);
    if (!result.ok) return;
    expect(result.messageId).toMatch(/^<[0-9a-f-]{36}@lab\.salvo\.test>$/);
    expect(headersOf(await readBack(lead.email, result.messageId)).get("message-id")).toEqual([result.messageId]);
  });

  it("reports a wrong password as auth_failed with the server's 535 text", async () => {
    const result = await sendMail(settings(lab.smtp, "wrong-password"), { from: sender.email, to: lead.email, subject: "x", text: "x" }, secure);
    expect(result).toEqual({
      ok: false,
      failure: { kind: "auth_failed", code: 535, text: expect.stringMatching(/^535 5\.7\.8 .*authentication failed/) },
    });
  });

  it("reports an unknown lab address as recipient_rejected 550", async () => {
    const result = await sendMail(settings(lab.smtp), { from: sender.email, to: `nobody-${unique()}@lab.salvo.test`, subject: "x", text: "x" }, secure);
    expect(result).toEqual({
      ok: false,
      failure: { kind: "recipient_rejected", code: 550, text: expect.stringMatching(/^550 5\.1\.1 .*User unknown/) },
    });
  });

  it("has the lab's sink take a message for any address there (what bench:engine compares clients on)", async () => {
    const result = await sendMail(settings(lab.smtp), { from: sender.email, to: `anyone-${unique()}@${lab.sink_domain}`, subject: "x", text: "x" }, secure);
    expect(result).toMatchObject({ ok: true, reply: { code: 250 } });
  });

  it("reports relay denied (554) as permanent, not as the recipient's bounce", async () => {
    const result = await sendMail(settings(lab.smtp), { from: sender.email, to: "someone@example.com", subject: "x", text: "x" }, secure);
    expect(result).toEqual({
      ok: false,
      failure: { kind: "permanent", code: 554, text: expect.stringMatching(/Relay access denied/) },
    });
  });

  it("reports the server's 421 (a sending limit, then it hangs up) as unavailable with its words, not as a lost connection", async () => {
    const result = await sendMail(settings(lab.smtp), { from: lab.limited_senders.throttled, to: lead.email, subject: "x", text: "x" }, secure);
    expect(result).toEqual({
      ok: false,
      failure: { kind: "unavailable", code: 421, text: expect.stringMatching(/^421 4\.7\.0 .*too much mail from this sender/) },
    });
  });

  it("reports a 4xx at RCPT as transient", async () => {
    const result = await sendMail(
      { host: "127.0.0.1", port: scripted.transient, security: "plain", username: sender.email, password: "x" },
      { from: sender.email, to: lead.email, subject: "x", text: "x" },
      { allowPlain: true, outbound: LAB_HOSTS },
    );
    expect(result).toEqual({ ok: false, failure: { kind: "transient", code: 451, text: "451 4.3.0 Try again later: mailbox busy" } });
  });

  it("reports a server that hangs up as a connection failure, without hanging", async () => {
    const started = Date.now();
    const result = await sendMail(
      { host: "127.0.0.1", port: scripted.hangup, security: "plain", username: sender.email, password: "x" },
      { from: sender.email, to: lead.email, subject: "x", text: "x" },
      { allowPlain: true, outbound: LAB_HOSTS },
    );
    expect(result).toMatchObject({ ok: false, failure: { kind: "connection", code: null, text: expect.stringMatching(/closed the connection/) } });
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("gives up on a server that never answers after the timeout, as a connection failure", async () => {
    const started = Date.now();
    const result = await sendMail(
      { host: "127.0.0.1", port: scripted.silent, security: "plain", username: sender.email, password: "x" },
      { from: sender.email, to: lead.email, subject: "x", text: "x" },
      { allowPlain: true, outbound: LAB_HOSTS, timeoutMs: 500 },
    );
    expect(result).toMatchObject({ ok: false, failure: { kind: "connection", code: null, text: "timed out after 500 ms waiting for the greeting" } });
    expect(Date.now() - started).toBeGreaterThanOrEqual(450);
    expect(Date.now() - started).toBeLessThan(5000);
  });

  it("reports a session lost after the message was handed over as unconfirmed (it may have been taken), never as a connection failure", async () => {
    const scriptedAt = (port: number) => ({ host: "127.0.0.1", port, security: "plain" as const, username: sender.email, password: "x" });
    const message = { from: sender.email, to: lead.email, subject: "x", text: "x" };
    const closed = await sendMail(scriptedAt(scripted.lostAfterData), message, { allowPlain: true, outbound: LAB_HOSTS });
    expect(closed).toMatchObject({ ok: false, failure: { kind: "unconfirmed", code: null, text: expect.stringMatching(/closed the connection.*may have been taken/) } });
    const silent = await sendMail(scriptedAt(scripted.silentAfterData), message, { allowPlain: true, outbound: LAB_HOSTS, timeoutMs: 500 });
    expect(silent).toMatchObject({ ok: false, failure: { kind: "unconfirmed", code: null, text: expect.stringMatching(/^timed out after 500 ms waiting for the answer to the message/) } });
  });

  it("refuses plain SMTP unless the caller allows it, without connecting", async () => {
    const result = await sendMail(settings(lab.smtp_plain), { from: sender.email, to: lead.email, subject: "x", text: "x" }, secure);
    expect(result).toEqual({ ok: false, failure: { kind: "permanent", code: null, text: expect.stringMatching(/unencrypted SMTP is refused/) } });
    const allowed = await sendMail(settings(lab.smtp_plain), { from: sender.email, to: lead.email, subject: "x", text: "x" }, { allowPlain: true, outbound: LAB_HOSTS });
    expect(allowed).toMatchObject({ ok: true, reply: { code: 250 } });
  });

  it("refuses to talk in clear to a STARTTLS endpoint that offers no STARTTLS", async () => {
    const result = await sendMail(
      { host: "127.0.0.1", port: lab.smtp_plain.port, security: "starttls", username: sender.email, password: sender.password },
      { from: sender.email, to: lead.email, subject: "x", text: "x" },
      secure,
    );
    expect(result).toMatchObject({ ok: false, failure: { kind: "connection", code: null, text: expect.stringMatching(/does not offer STARTTLS/) } });
  });
});

describe("SmtpSender: several messages on one session", () => {
  const recorderAt = { host: "127.0.0.1", port: scripted.recorder, security: "plain" as const, username: sender.email, password: "x" };
  /** A sender to the recording server under a name of its own (starting with `prefix`, which may script it), and the sessions that name opened. */
  const recording = (prefix = "s") => {
    const helo = `${prefix}${unique().slice(0, 8)}.test`;
    const smtp = new SmtpSender(recorderAt, { allowPlain: true, outbound: LAB_HOSTS, heloName: helo });
    const sessions = async () => (await (await fetch(`${reader}/smtp-sessions?helo=${helo}`)).json()) as string[][];
    const to = (local: string) => ({ from: sender.email, to: `${local}@lab.salvo.test`, subject: "x", text: "x" });
    return { smtp, sessions, to, helo };
  };
  const transaction = ["MAIL FROM", "RCPT TO", "DATA", "<message>"];
  /** How many messages each session carried. */
  const carried = (all: string[][]) => all.map((commands) => commands.filter((c) => c === "<message>").length);

  it("delivers three messages into the lab on one session, each readable, each with its own Message-ID", async () => {
    const smtp = new SmtpSender(settings(lab.smtp), secure);
    const results = [];
    for (const n of [1, 2, 3]) results.push(await smtp.send({ from: sender.email, to: lead.email, subject: `Reuse ${n} ${unique()}`, text: `message ${n}` }));
    await smtp.close();
    expect(results.map((r) => r.ok)).toEqual([true, true, true]);
    const ids = results.map((r) => (r.ok ? r.messageId : ""));
    expect(new Set(ids).size).toBe(3);
    for (const [n, id] of ids.entries()) expect(await readBack(lead.email, id)).toContain(`message ${n + 1}`);
  });

  it("sends RSET between messages on one session, and QUIT once at the end", async () => {
    const { smtp, sessions, to, helo } = recording();
    for (const local of ["a", "b", "c"]) expect(await smtp.send(to(local))).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([[`EHLO ${helo}`, "AUTH", ...transaction, "RSET", ...transaction, "RSET", ...transaction, "QUIT"]]);
  });

  it("keeps the session after a refused or deferred recipient, classified as before", async () => {
    const { smtp, sessions, to } = recording();
    expect(await smtp.send(to("reject-me"))).toMatchObject({ ok: false, failure: { kind: "recipient_rejected", code: 550 } });
    expect(await smtp.send(to("busy-now"))).toMatchObject({ ok: false, failure: { kind: "transient", code: 451 } });
    expect(await smtp.send(to("fine"))).toMatchObject({ ok: true });
    await smtp.close();
    const all = await sessions();
    expect(all).toHaveLength(1);
    // DATA goes in the same write as the envelope; the server answers it 554 (no recipient taken).
    expect(all[0]!.slice(2)).toEqual(["MAIL FROM", "RCPT TO", "DATA", "RSET", "MAIL FROM", "RCPT TO", "DATA", "RSET", ...transaction, "QUIT"]);
  });

  it("ends the session when the server waits for a message after refusing the lead (its blind copy taken), and sends nothing", async () => {
    const { smtp, sessions, to, helo } = recording();
    expect(await smtp.send(to("reject-me"), ["copy@lab.salvo.test"])).toMatchObject({ ok: false, failure: { kind: "recipient_rejected", code: 550 } });
    expect(await smtp.send(to("next"))).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([
      [`EHLO ${helo}`, "AUTH", "MAIL FROM", "RCPT TO", "RCPT TO", "DATA"],
      [`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"],
    ]);
  });

  it("reads every pipelined answer after a refused MAIL FROM, so the session stays in step for the next message", async () => {
    const { smtp, sessions, to } = recording();
    expect(await smtp.send({ ...to("one"), from: "refused@lab.salvo.test" })).toMatchObject({ ok: false, failure: { kind: "permanent", code: 553 } });
    expect(await smtp.send(to("two"))).toMatchObject({ ok: true });
    await smtp.close();
    const all = await sessions();
    expect(all).toHaveLength(1);
    expect(all[0]!.slice(2)).toEqual(["MAIL FROM", "RCPT TO", "DATA", "RSET", ...transaction, "QUIT"]);
  });

  it("after a session lost with the message handed over: that one is unconfirmed, the next goes on a new session", async () => {
    const { smtp, sessions, to, helo } = recording();
    expect(await smtp.send(to("first"))).toMatchObject({ ok: true });
    expect(await smtp.send(to("lost-one"))).toMatchObject({ ok: false, failure: { kind: "unconfirmed", code: null } });
    expect(await smtp.send(to("after"))).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([
      [`EHLO ${helo}`, "AUTH", ...transaction, "RSET", ...transaction],
      [`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"],
    ]);
  });

  it("replaces a session the server ended between messages before anything of the next one is sent", async () => {
    const { smtp, sessions, to, helo } = recording();
    expect(await smtp.send(to("bye-then"))).toMatchObject({ ok: true });
    expect(await smtp.send(to("next"))).toMatchObject({ ok: true });
    await smtp.close();
    const all = await sessions();
    expect(all).toHaveLength(2);
    expect(all[1]).toEqual([`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"]);
  });

  it("carries a message on a new session when the server answers 421 on the reused one (its cap of messages a connection), sending it once", async () => {
    const { smtp, sessions, to, helo } = recording();
    const from = { from: "closing@lab.salvo.test" };
    expect(await smtp.send({ ...to("first"), ...from })).toMatchObject({ ok: true });
    expect(await smtp.send({ ...to("second"), ...from })).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([
      [`EHLO ${helo}`, "AUTH", ...transaction, "RSET", "MAIL FROM", "RCPT TO", "DATA"],
      [`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"],
    ]);
  });

  const envelope = (ready: Outgoing): Envelope => {
    if (!ready.ok) throw new Error(ready.failure.text);
    return ready.envelope;
  };

  it("delivers into the lab with each next envelope written behind the message before it, each readable", async () => {
    const smtp = new SmtpSender(settings(lab.smtp), secure);
    const ready = [1, 2, 3].map((n) => outgoing({ from: sender.email, to: lead.email, subject: `Ahead ${n} ${unique()}`, text: `ahead ${n}` }));
    const results = [];
    for (const [n, message] of ready.entries()) results.push(await smtp.deliver(message, ready[n + 1] ? { next: envelope(ready[n + 1]!) } : {}));
    await smtp.close();
    expect(results.map((r) => r.ok)).toEqual([true, true, true]);
    for (const [n, result] of results.entries()) expect(await readBack(lead.email, result.ok ? result.messageId : "")).toContain(`ahead ${n + 1}`);
  });

  it("a message whose envelope went ahead starts with its content: no RSET, no second envelope", async () => {
    const { smtp, sessions, to, helo } = recording();
    const [a, b, c] = ["a", "b", "c"].map((local) => outgoing(to(local))) as [Outgoing, Outgoing, Outgoing];
    expect(await smtp.deliver(a, { next: envelope(b) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(b, { next: envelope(c) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(c)).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([[`EHLO ${helo}`, "AUTH", ...transaction, ...transaction, ...transaction, "QUIT"]]);
  });

  it("names a message handed over only once its envelope is taken, before its first byte", async () => {
    const { smtp, sessions, to } = recording();
    const seen: string[][] = [];
    const handingOver = async () => void seen.push((await sessions())[0]!.slice(2));
    expect(await smtp.deliver(outgoing(to("reject-me")), { handingOver })).toMatchObject({ ok: false, failure: { kind: "recipient_rejected" } });
    expect(seen).toEqual([]);
    const [b, c] = [outgoing(to("b")), outgoing(to("c"))];
    expect(await smtp.deliver(b, { handingOver, next: envelope(c) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(c, { handingOver })).toMatchObject({ ok: true });
    await smtp.close();
    const refused = ["MAIL FROM", "RCPT TO", "DATA"];
    // Each time, the server had the envelope (and DATA) and nothing of the message yet.
    expect(seen).toEqual([
      [...refused, "RSET", "MAIL FROM", "RCPT TO", "DATA"],
      [...refused, "RSET", ...transaction, "MAIL FROM", "RCPT TO", "DATA"],
    ]);
  });

  it("a refused recipient written ahead is that message's failure, and the session goes on", async () => {
    const { smtp, sessions, to } = recording();
    const [a, refused, c] = [outgoing(to("a")), outgoing(to("reject-me")), outgoing(to("c"))];
    expect(await smtp.deliver(a, { next: envelope(refused) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(refused, { next: envelope(c) })).toMatchObject({ ok: false, failure: { kind: "recipient_rejected", code: 550 } });
    expect(await smtp.deliver(c)).toMatchObject({ ok: true });
    await smtp.close();
    const all = await sessions();
    expect(all).toHaveLength(1);
    expect(all[0]!.slice(2)).toEqual([...transaction, "MAIL FROM", "RCPT TO", "DATA", "RSET", ...transaction, "QUIT"]);
  });

  it("a lead refused in an envelope written ahead with its blind copy taken: that session ends unused, the next message goes on a new one", async () => {
    const { smtp, sessions, to, helo } = recording();
    const refused = outgoing(to("reject-me"), ["copy@lab.salvo.test"]);
    expect(await smtp.deliver(outgoing(to("a")), { next: envelope(refused) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(refused)).toMatchObject({ ok: false, failure: { kind: "recipient_rejected", code: 550 } });
    expect(await smtp.deliver(outgoing(to("b")))).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([
      [`EHLO ${helo}`, "AUTH", ...transaction, "MAIL FROM", "RCPT TO", "RCPT TO", "DATA"],
      [`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"],
    ]);
  });

  it("an envelope written ahead for a message never delivered: the session is cut, nothing of it sent", async () => {
    const { smtp, sessions, to, helo } = recording();
    expect(await smtp.deliver(outgoing(to("a")), { next: envelope(outgoing(to("withdrawn"))) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(outgoing(to("other")))).toMatchObject({ ok: true });
    expect(await smtp.deliver(outgoing(to("last")), { next: envelope(outgoing(to("stopped"))) })).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([
      [`EHLO ${helo}`, "AUTH", ...transaction, "MAIL FROM", "RCPT TO", "DATA"],
      [`EHLO ${helo}`, "AUTH", ...transaction, "RSET", ...transaction, "MAIL FROM", "RCPT TO", "DATA"],
    ]);
  });

  it("a session the server ends after a message costs the envelope written ahead nothing: it goes again on a new session", async () => {
    const { smtp, sessions, to, helo } = recording();
    const next = outgoing(to("next"));
    expect(await smtp.deliver(outgoing(to("bye-then")), { next: envelope(next) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(next)).toMatchObject({ ok: true });
    await smtp.close();
    const all = await sessions();
    expect(all).toHaveLength(2);
    expect(all[1]).toEqual([`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"]);
  });

  it("an envelope written ahead that the server answers 421: its message goes on a new session, sent once", async () => {
    const { smtp, sessions, to, helo } = recording();
    const from = { from: "closing@lab.salvo.test" };
    const next = outgoing({ ...to("second"), ...from });
    expect(await smtp.deliver(outgoing({ ...to("first"), ...from }), { next: envelope(next) })).toMatchObject({ ok: true });
    expect(await smtp.deliver(next)).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([
      [`EHLO ${helo}`, "AUTH", ...transaction, "MAIL FROM", "RCPT TO", "DATA"],
      [`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"],
    ]);
  });

  it("opens a new session after 100 messages", async () => {
    const { smtp, sessions, to } = recording();
    for (let n = 0; n < 101; n += 1) expect((await smtp.send(to(`m${n}`))).ok).toBe(true);
    await smtp.close();
    expect(carried(await sessions())).toEqual([100, 1]);
  });

  /** The sessions once `count` of them have logged in (a session opened ahead logs in on its own). */
  const loggedIn = async (sessions: () => Promise<string[][]>, count: number) => {
    for (let tries = 0; tries < 200; tries += 1) {
      const all = await sessions();
      if (all.length >= count && all.every((commands) => commands.includes("AUTH"))) return all;
      await new Promise((resolve) => setTimeout(resolve, 10));
    }
    throw new Error(`${count} sessions never logged in`);
  };

  it("opens the first session ahead when warmed: logged in before the first message, which goes on it with no RSET; warmed while a session has room, it opens none", async () => {
    const { smtp, sessions, to, helo } = recording();
    smtp.warm(2);
    smtp.warm(2);
    expect(await loggedIn(sessions, 1)).toEqual([[`EHLO ${helo}`, "AUTH"]]);
    expect(await smtp.send(to("a"))).toMatchObject({ ok: true });
    smtp.warm(1);
    expect(await smtp.send(to("b"))).toMatchObject({ ok: true });
    await smtp.close();
    expect(await sessions()).toEqual([[`EHLO ${helo}`, "AUTH", ...transaction, "RSET", ...transaction, "QUIT"]]);
  });

  it("opens the next session once 25 messages are left on the open one and more are coming; the 101st goes on it", async () => {
    const { smtp, sessions, to, helo } = recording();
    for (let n = 0; n < 100; n += 1) {
      smtp.warm(101 - n);
      if (n === 75) expect(await sessions(), "26 left on the first session: no second yet").toHaveLength(1);
      expect((await smtp.send(to(`m${n}`))).ok).toBe(true);
      if (n === 75) expect((await loggedIn(sessions, 2))[1], "25 left: the second logged in").toEqual([`EHLO ${helo}`, "AUTH"]);
    }
    smtp.warm(1);
    expect(await smtp.send(to("m100"))).toMatchObject({ ok: true });
    await smtp.close();
    const all = await sessions();
    expect(carried(all)).toEqual([100, 1]);
    expect(all[1]).toEqual([`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"]);
  });

  it("opens no next session while the open one has room for every message coming", async () => {
    const { smtp, sessions, to } = recording();
    for (let n = 0; n < 100; n += 1) {
      smtp.warm(100 - n);
      expect((await smtp.send(to(`m${n}`))).ok).toBe(true);
    }
    await smtp.close();
    expect(carried(await sessions())).toEqual([100]);
  });

  it("a session opened ahead that the server ended while it waited: the message goes on a new one, sent once", async () => {
    const { smtp, sessions, to, helo } = recording("idle");
    smtp.warm(1);
    await loggedIn(sessions, 1);
    await new Promise((resolve) => setTimeout(resolve, 400));
    expect(await smtp.send(to("after-idle"))).toMatchObject({ ok: true });
    await smtp.close();
    const all = await sessions();
    expect(carried(all)).toEqual([0, 1]);
    expect(all[1]).toEqual([`EHLO ${helo}`, "AUTH", ...transaction, "QUIT"]);
  });

  it("a session opened ahead and never used ends with QUIT", async () => {
    const { smtp, sessions, helo } = recording();
    smtp.warm(1);
    await smtp.close();
    expect(await sessions()).toEqual([[`EHLO ${helo}`, "AUTH", "QUIT"]]);
  });

  it("a login refused on a session opened ahead is the next message's failure, as when it logs in then", async () => {
    const smtp = new SmtpSender(settings(lab.smtp, "wrong-password"), secure);
    smtp.warm(1);
    const result = await smtp.send({ from: sender.email, to: lead.email, subject: `Refused ${unique()}`, text: "x" });
    await smtp.close();
    expect(result).toEqual({ ok: false, failure: { kind: "auth_failed", code: 535, text: expect.stringMatching(/^535 5\.7\.8/) } });
  });
});

describe("checkSmtp against the mail lab", () => {
  it("passes with the right password over STARTTLS and implicit TLS", async () => {
    for (const endpoint of [lab.smtp, lab.smtp_tls]) {
      expect(await checkSmtp(settings(endpoint), secure)).toMatchObject({ ok: true, reply: { code: 235 } });
    }
  });

  it("fails with a wrong password, carrying the server's reason", async () => {
    expect(await checkSmtp(settings(lab.smtp, "wrong-password"), secure)).toEqual({
      ok: false,
      failure: { kind: "auth_failed", code: 535, text: expect.stringMatching(/^535 5\.7\.8/) },
    });
  });

  it("fails as a connection failure when nothing listens", async () => {
    const result = await checkSmtp({ ...settings(lab.smtp), port: 1 }, secure);
    expect(result).toMatchObject({ ok: false, failure: { kind: "connection", code: null } });
  });
});
