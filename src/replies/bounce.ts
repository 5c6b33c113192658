import { htmlToText } from "../mail/html-text";
import { header, parseHeaderBlock, type ParsedMessage } from "../mail/parsed";

export interface Bounce {
  /** hard: the address will not take mail (the lead is blocked); soft: a condition that may clear. */
  kind: "hard" | "soft";
  /** The address that failed, lower-cased. */
  recipient: string | null;
  /** The enhanced status code (RFC 3463), e.g. "5.1.1". */
  status: string | null;
  diagnostic: string | null;
  /** Message-ID of the message that bounced, angle brackets kept: how the campaign email is found. */
  originalMessageId: string | null;
}

type Fields = Map<string, string>;

const REPORT_TYPES = new Set(["message/delivery-status", "message/global-delivery-status"]);
const RETURNED_HEADER_TYPES = new Set(["text/rfc822-headers", "message/global-headers", "message/global"]);

const DAEMON_LOCAL_PART = /^(mailer-daemon|mailer_daemon|mailerdaemon|mail-daemon|postmaster|mdaemon)$/i;
const DAEMON_NAME = /^mail(er)? delivery (system|subsystem|service)$|^mail ?administrator$|^system administrator$/i;

const BOUNCE_SUBJECT = new RegExp(
  [
    "undeliver(ed|able)",
    "returned mail",
    "returning message to sender",
    "mail (delivery )?(failed|failure)",
    "delivery (status notification|failure|failed|has failed)",
    "failure notice",
    "non remis",
    "non recapitabile",
    "unzustellbar",
    "onbestelbaar",
    "no (se puede )?entregado",
    "message not delivered",
    "mail system error",
    "nondeliverable",
  ].join("|"),
  "i",
);

// Phrases MTAs put in the notice itself; a human reply only carries them quoted, and quoted lines
// are dropped before matching.
const BOUNCE_PHRASE = new RegExp(
  [
    "this message was created automatically by mail delivery software",
    "this is the qmail-send program",
    "this is the (mail system|postfix program) at host",
    "delivery has failed to these recipients",
    "delivery to the following recipients? failed",
    "delivery to the following recipient has failed permanently",
    "your message (wasn't|was not|could not be|couldn't be) delivered",
    "your message did not reach some or all of the intended recipients",
    "did not reach the following recipient",
    "address not found",
    "i'm afraid i wasn't able to deliver",
    "sorry, we were unable to deliver your message",
    "could not be delivered to (one or more|the following)",
    "the following addresses? had permanent fatal errors",
    "unable to deliver (your )?message",
    "message could not be delivered",
    "a message that you sent could not be delivered",
    "permanent (fatal )?error",
    "undeliverable message",
    "the original message was received at",
    "failed addresses follow",
  ].join("|"),
  "i",
);

// A warning that the MTA is still trying: not a bounce (yet).
const DELAY = new RegExp(
  [
    "delivery status notification \\(delay\\)",
    "delayed mail",
    "\\bdelayed\\b.{0,200}?\\b(hours?|days?)\\b",
    "this is just a warning",
    "(has|have) not (yet )?been delivered",
    "will (continue to )?(retry|try)",
    "still (trying|being retried)",
    "delivery (to the following recipients? )?(has been|is) delayed",
    "warning: message .{0,200}? delayed",
    "(message|mail) is delayed",
    "only a temporary failure report",
    "(do not|don't) need to re-?send",
    "could not send (mail|message) for (the )?past",
  ].join("|"),
  "i",
);

const REPLY_PREFIX = /^\s*(re|fwd?|aw|wg|sv|vs|tr|rif|antw)\s*:/i;
const OUT_OF_OFFICE_SUBJECT =
  /^(automatic reply|auto(matic)?[ -]?(reply|response|respons)|out of (the )?office|abwesenheit|absence|away)\b|\b(out of (the )?office|on vacation|on holiday)\b/i;

const SOFT_PHRASE = new RegExp(
  [
    "mailbox (is )?full",
    "over ?quota",
    "quota exceeded",
    "exceeded (its|the|their|storage)",
    "insufficient (system )?storage",
    "full mailbox",
    "temporar(y|ily)",
    "greylist",
    "try again later",
    "deferred",
    "too many (connections|messages)",
    "rate limit",
    "timed out",
    "connection refused",
  ].join("|"),
  "i",
);
const FULL_MAILBOX = /mailbox (is )?full|over ?quota|quota exceeded|exceeded (its|the|their|storage)|insufficient storage|full mailbox/i;
const HARD_PHRASE =
  /user unknown|unknown user|no such (user|recipient|mailbox|address)|does not exist|doesn't exist|address not found|invalid (recipient|address|mailbox)|recipient (address )?rejected|mailbox unavailable|not a valid|account (has been )?(disabled|closed)|address rejected|no mailbox|host unknown|domain not found/i;

// Bounded runs (RFC 5321's 64-octet local part, 63-octet labels): an unbounded run before "@" is
// scanned again from every starting point, quadratic on a long word.
const EMAIL = /[\w.!#$%&'*+/=?^`{|}~-]{1,64}@[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?(?:\.[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?){1,8}/i;
const MESSAGE_ID = /<[^<>\s]+@[^<>\s]+>/;
const STATUS_CODE = /(?<![\d.])([245])\.(\d{1,3})\.(\d{1,3})(?![\d.]*\d)/;
const SMTP_REPLY = /(?<![\d.])([45]\d\d)(?=[ -]|$)/m;

// Where an inline copy of the returned message starts in a plain-text bounce. Space before a marker
// is [ \t]*, never \s*: \s crosses line breaks, and from every line start of a run of blank lines
// it would scan the rest of the run (quadratic: 600 KB of blank lines took 91 s).
const RETURNED_MARKER = new RegExp(
  [
    "^-+ ?this is a copy of the message",
    "^-+ ?(original|returned|undelivered) message",
    "^-+ ?below this line is a copy of the message",
    "^-+ ?the header of the original message",
    "^-+ ?original message headers",
    "^original message headers:",
    "^--- ?below is the original message",
    "^[ \\t]*-+ ?the body of the message",
    "^(return-path|received|message-id|x-[\\w-]+|dkim-signature|mime-version): ",
  ].join("|"),
  "im",
);

/**
 * Whether a message read back from a mailbox is a bounce (a final failure to deliver one of our
 * messages), and which address, how badly and for which message. null: not a bounce, which includes
 * delay warnings, out-of-office answers and human replies that quote a bounce.
 */
export function classifyBounce(message: ParsedMessage): Bounce | null {
  const reports = message.parts.filter((p) => REPORT_TYPES.has(p.mimeType));
  if (reports.length > 0) {
    const report = fromDeliveryStatus(message, reports.map((p) => p.content).join("\n\n"));
    if (report !== undefined) return report;
  }
  return fromNotice(message);
}

/** undefined: the report named no recipient, so the notice text has to be read instead. */
function fromDeliveryStatus(message: ParsedMessage, report: string): Bounce | null | undefined {
  const recipients = recipientGroups(report);
  if (recipients.length === 0) return undefined;
  const failed = recipients.find((fields) => {
    const action = fields.get("action")?.toLowerCase().trim();
    // A report without an Action (seen in the wild) is read from its status.
    // "expired" (not in RFC 3464, seen in the wild) is a message given up on, like "failed".
    return action ? action === "failed" || action === "expired" : /^5/.test(fields.get("status") ?? "");
  });
  if (!failed) return null;
  const status = failed.get("status")?.match(STATUS_CODE)?.[0] ?? null;
  const diagnostic = failed.get("diagnostic-code")?.replace(/^\s*smtp\s*;\s*/i, "").trim() || null;
  const notice = splitReturned(unquoted(message.text)).notice;
  return {
    // Without a diagnostic, the reason is only in the notice (Exim: "mailbox is full").
    kind: kindOf(status, diagnostic ?? notice),
    recipient:
      reportAddress(failed.get("original-recipient")) ??
      reportAddress(failed.get("final-recipient")) ??
      noticeRecipient(message, notice),
    status,
    diagnostic,
    originalMessageId: originalMessageId(message, ""),
  };
}

/**
 * The per-recipient groups of a delivery-status report (RFC 3464). Some MTAs leave out the
 * per-message group, so a group is told by its recipient fields, not by its place.
 */
function recipientGroups(report: string): Fields[] {
  return report
    .replace(/\r\n/g, "\n")
    .split(/\n[ \t]*\n/)
    .map((group) => new Map(parseHeaderBlock(group.trim()).map((h) => [h.key, h.value])))
    .filter((fields) => fields.has("final-recipient") || fields.has("original-recipient"));
}

function reportAddress(value: string | undefined): string | null {
  if (!value) return null;
  const address = value.replace(/^\s*[\w-]+\s*;/, "").match(EMAIL)?.[0];
  return address ? address.toLowerCase() : null;
}

/** A bounce without a usable delivery-status report: the MTA's own words, read heuristically. */
function fromNotice(message: ParsedMessage): Bounce | null {
  const { notice, returned } = splitReturned(unquoted(message.text || htmlText(message.html)));
  const daemon = isDaemon(message);
  // "Re: Undeliverable ..." is someone answering or forwarding a bounce, not the bounce.
  const subjectSays = BOUNCE_SUBJECT.test(message.subject) && !REPLY_PREFIX.test(message.subject);
  const noticeSays = BOUNCE_PHRASE.test(notice);
  const isBounce = (daemon && (subjectSays || noticeSays)) || (subjectSays && noticeSays);
  if (!isBounce || OUT_OF_OFFICE_SUBJECT.test(message.subject)) return null;
  if ((DELAY.test(message.subject) || DELAY.test(notice)) && !/permanent|failed permanently/i.test(notice)) return null;

  const status = notice.match(STATUS_CODE)?.[0] ?? null;
  const diagnostic = noticeDiagnostic(notice);
  return {
    // The first failure's own line when there is one: a notice may list several recipients and reasons.
    kind: kindOf(status, diagnostic ?? notice),
    recipient: noticeRecipient(message, notice),
    status,
    diagnostic,
    originalMessageId: originalMessageId(message, returned),
  };
}

function isDaemon(message: ParsedMessage): boolean {
  const local = message.from?.split("@")[0] ?? "";
  // The display name from the header itself: parseMessage drops it when the address is empty ("MAILER-DAEMON <>").
  const name = (header(message, "from") ?? "").replace(/<[^<>]*>/g, "").replace(/"/g, "").trim();
  if (DAEMON_LOCAL_PART.test(local) || DAEMON_LOCAL_PART.test(name) || DAEMON_NAME.test(name)) return true;
  // A bounce is sent with an empty envelope sender (RFC 5321 section 4.5.5).
  return /^\s*<>\s*$/.test(header(message, "return-path") ?? "");
}

/** The text without quoted lines and without what follows an "On ... wrote:" attribution. */
function unquoted(text: string): string {
  const lines = text.replace(/\r\n/g, "\n").split("\n");
  const attribution = lines.findIndex((line) => /^on .{1,200} wrote:$/i.test(line.trim()));
  return (attribution >= 0 ? lines.slice(0, attribution) : lines).filter((line) => !/^\s*>/.test(line)).join("\n");
}

function htmlText(html: string | null): string {
  return html ? htmlToText(html) : "";
}

function splitReturned(text: string): { notice: string; returned: string } {
  const at = text.search(RETURNED_MARKER);
  return at < 0 ? { notice: text, returned: "" } : { notice: text.slice(0, at), returned: text.slice(at) };
}

function noticeRecipient(message: ParsedMessage, notice: string): string | null {
  // Exim names the failed addresses in a header of its own.
  const failed = header(message, "x-failed-recipients")?.match(EMAIL)?.[0];
  if (failed) return failed.toLowerCase();
  const ours = new Set([message.from, ...message.to].filter((a): a is string => a !== null));
  const candidates = [
    // qmail, Yahoo and Postfix put the address at the start of its own line: "<user@host>:".
    ...[...notice.matchAll(/^[ \t]*<([^<>\s]+@[^<>\s]+)>:?/gm)].map((m) => m[1] ?? ""),
    ...[...notice.matchAll(new RegExp(EMAIL.source, "gi"))].map((m) => m[0]),
  ];
  const address = candidates.find((a) => {
    const lower = a.toLowerCase();
    return !ours.has(lower) && !DAEMON_LOCAL_PART.test(lower.slice(0, lower.indexOf("@")));
  });
  return address ? address.toLowerCase() : enclosedTo(message);
}

function enclosedTo(message: ParsedMessage): string | null {
  const to = message.enclosedMessages[0]?.headers.find((h) => h.key === "to")?.value.match(EMAIL)?.[0];
  return to ? to.toLowerCase() : null;
}

function noticeDiagnostic(notice: string): string | null {
  const line = notice
    .split("\n")
    .map((l) => l.trim())
    .find((l) => SMTP_REPLY.test(l) || STATUS_CODE.test(l) || HARD_PHRASE.test(l) || SOFT_PHRASE.test(l));
  return line ? line.slice(0, 500) : null;
}

function originalMessageId(message: ParsedMessage, returnedText: string): string | null {
  const returnedHeaders = [
    ...message.enclosedMessages.map((m) => m.headers),
    ...message.parts.filter((p) => RETURNED_HEADER_TYPES.has(p.mimeType)).map((p) => parseHeaderBlock(p.content)),
  ];
  for (const headers of returnedHeaders) {
    const id = headers.find((h) => h.key === "message-id")?.value.match(MESSAGE_ID)?.[0];
    if (id) return id;
  }
  if (message.inReplyTo) return message.inReplyTo;
  const lastReference = message.references.at(-1);
  if (lastReference) return lastReference;
  return returnedText.match(/^[ \t]*message-id:[ \t]*(<[^<>\s]+>)/im)?.[1] ?? null;
}

function kindOf(status: string | null, text: string): "hard" | "soft" {
  // A full mailbox can empty again, whatever class the server gave it.
  if (status?.endsWith(".2.2") || FULL_MAILBOX.test(text)) return "soft";
  if (status) return status.startsWith("5") ? "hard" : "soft";
  const reply = text.match(SMTP_REPLY)?.[1];
  if (reply) return reply.startsWith("5") ? "hard" : "soft";
  if (SOFT_PHRASE.test(text) && !HARD_PHRASE.test(text)) return "soft";
  // The message came back undelivered with no sign that the condition is temporary.
  return "hard";
}
