import { describe, expect, it } from "vitest";
import { classifyReply, enhancedStatus, parseReply, type SmtpStage } from "../../src/mail/smtp-replies";

const reply = (text: string) => {
  const parsed = parseReply(text.split("\n"));
  if (!parsed) throw new Error(`not a reply: ${text}`);
  return parsed;
};

describe("parseReply", () => {
  it("joins continuation lines and keeps the code", () => {
    expect(parseReply(["250-mail.lab.salvo.test", "250-AUTH PLAIN LOGIN", "250 8BITMIME"])).toEqual({
      code: 250,
      text: "250-mail.lab.salvo.test\n250-AUTH PLAIN LOGIN\n250 8BITMIME",
    });
    expect(parseReply(["221"])).toEqual({ code: 221, text: "221" });
  });

  it("refuses what is not one well-formed reply", () => {
    expect(parseReply([])).toBeNull();
    expect(parseReply(["hello"])).toBeNull();
    expect(parseReply(["600 nope"])).toBeNull();
    expect(parseReply(["250-first", "251 other code"])).toBeNull();
    expect(parseReply(["250-first", "250-not last"])).toBeNull();
    expect(parseReply(["250 first", "250 second"])).toBeNull();
  });
});

describe("enhancedStatus", () => {
  it("reads the RFC 3463 code after the reply code", () => {
    expect(enhancedStatus(reply("550 5.1.1 <x@y>: User unknown"))).toEqual({ klass: 5, subject: 1, detail: 1 });
    expect(enhancedStatus(reply("550 User unknown"))).toBeNull();
  });
});

describe("classifyReply", () => {
  const cases: [SmtpStage, string, string][] = [
    // The lab's (Postfix's) own answers.
    ["auth", "535 5.7.8 Error: authentication failed: (reason unavailable)", "auth_failed"],
    ["rcpt", "550 5.1.1 <nobody@lab.salvo.test>: Recipient address rejected: User unknown in virtual mailbox table", "recipient_rejected"],
    ["rcpt", "554 5.7.1 <someone@example.com>: Relay access denied", "permanent"],
    // Other providers' usual answers.
    // The server's state, not the lead's: closing the channel (421, at any step), or a 4xx to the session's own steps.
    ["auth", "454 4.7.0 Temporary authentication failure", "unavailable"],
    ["auth", "454 4.7.0 Too many login attempts, please try again later.", "unavailable"],
    ["auth", "534-5.7.9 Application-specific password required.\n534 5.7.9 Learn more at https://support.google.com", "auth_failed"],
    ["greeting", "421 4.3.2 Service not available, closing transmission channel", "unavailable"],
    ["rcpt", "421 4.7.0 Try again later, closing connection.", "unavailable"],
    ["message", "421 4.4.2 Message submission rate for this client has exceeded the configured limit", "unavailable"],
    ["mail", "530 5.7.0 Authentication required", "auth_failed"],
    ["mail", "553 5.7.1 Sender address rejected: not owned by user", "permanent"],
    ["mail", "452 4.3.1 Insufficient system storage", "unavailable"],
    ["mail", "450 4.7.1 <me@example.com>: Sender address rejected: sending rate exceeded", "unavailable"],
    ["rcpt", "450 4.2.0 <a@b.test>: Recipient address rejected: Greylisted", "transient"],
    ["rcpt", "451 4.3.0 Try again later", "transient"],
    ["rcpt", "550 5.2.1 The email account that you tried to reach is disabled.", "recipient_rejected"],
    ["rcpt", "550 Requested action not taken: mailbox unavailable", "recipient_rejected"],
    ["rcpt", "553 5.1.3 Bad recipient address syntax", "recipient_rejected"],
    ["rcpt", "530 5.7.0 Must issue a STARTTLS command first / authentication required", "auth_failed"],
    ["message", "550 5.7.1 Message rejected as spam", "permanent"],
    ["message", "554 5.1.1 Delivery failed: no such user", "recipient_rejected"],
    ["message", "552 5.2.2 Mailbox full", "recipient_rejected"],
    ["message", "451 4.7.1 Please try again later", "transient"],
    ["ehlo", "502 5.5.2 Error: command not recognized", "permanent"],
    ["starttls", "454 4.7.0 TLS not available due to local problem", "unavailable"],
    // The sending mailbox's own volume or store, at whatever step, even as a 5xx: never the lead's bounce.
    ["rcpt", "550-5.4.5 Daily user sending limit exceeded. For more information on Gmail\n550 5.4.5 sending limits go to https://support.google.com/a/answer/166852 - gsmtp", "unavailable"],
    ["mail", "550 5.4.5 Daily user sending quota exceeded. - gsmtp", "unavailable"],
    ["message", "554 5.2.0 STOREDRV.Submission.Exception:SubmissionQuotaExceededException; Failed to process message due to a permanent exception with message Cannot submit message.", "unavailable"],
    ["message", "554 5.2.2 mailbox full; STOREDRV.Submission.Exception:QuotaExceededException.MapiExceptionShutoffQuotaExceeded", "unavailable"],
    ["mail", "550 5.2.251 Sender throttled due to continuous mailbox full errors.", "unavailable"],
    ["rcpt", "450 4.2.1 Peak SMTP relay limit exceeded for customer. This is a temporary error. - gsmtp", "transient"],
    ["rcpt", "552 5.2.2 <lead@example.com>: Recipient address rejected: Mailbox quota exceeded", "recipient_rejected"],
    ["data", "451 4.3.0 Error: queue file write error", "transient"],
    ["data", "354 End data with <CR><LF>.<CR><LF>", "permanent"],
  ];
  it.each(cases)("%s %s -> %s", (stage, text, kind) => {
    const parsed = reply(text);
    expect(classifyReply(stage, parsed)).toEqual({ kind, code: parsed.code, text });
  });
});
