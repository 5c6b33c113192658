/**
 * What an SMTP answer means for the engine (issue 13, item 3). Pure: no sockets here.
 *
 * - `auth_failed`: the mailbox's credentials (or its permission to submit) were refused; the engine
 *   suspends the mailbox with the server's text.
 * - `unavailable`: the mailbox's server will not take mail from it for now: it is closing the channel
 *   (421, at any step), answered a step of the session itself (greeting, EHLO, STARTTLS, AUTH, MAIL
 *   FROM) with another 4xx (too many connections or logins, a sending rate, a resource short), or
 *   refused the mailbox's own volume or store at any step (`sendersLimit`). Not the recipient's doing:
 *   the engine waits and tries again, counting no attempt against the lead.
 * - `transient`: a 4xx for the recipient or the message (RCPT, DATA, the message's end); try again later.
 * - `recipient_rejected`: a permanent refusal of this recipient (unknown user, bad domain, mailbox
 *   disabled); the engine records a BOUNCE for the lead.
 * - `permanent`: any other 5xx (sender refused, relay denied, message refused); not the recipient's fault.
 * - `connection`: no usable session (refused, closed, timed out, TLS failed, no STARTTLS); `code` is null.
 * - `unconfirmed`: the session was lost after the message was handed over (while sending it or
 *   waiting for the answer to it): the server may have taken it, so it must never be sent again.
 */
export type SmtpFailureKind = "auth_failed" | "unavailable" | "transient" | "recipient_rejected" | "permanent" | "connection" | "unconfirmed";

export interface SmtpFailure {
  kind: SmtpFailureKind;
  /** The server's three-digit reply code; null when the server gave none. */
  code: number | null;
  /** The server's reply as it sent it (continuation lines joined by "\n"), or what went wrong. */
  text: string;
}

export interface SmtpReply {
  code: number;
  text: string;
}

/** The SMTP command a reply answered; the same code means different things at different steps. */
export type SmtpStage = "greeting" | "ehlo" | "starttls" | "auth" | "mail" | "rcpt" | "data" | "message";

/**
 * Parses one complete reply from its lines (`250-first`, ..., `250 last`). Returns null when the lines
 * are not a well-formed reply: all lines must carry the same code, only the last with a space.
 */
export function parseReply(lines: readonly string[]): SmtpReply | null {
  const first = lines[0];
  if (first === undefined) return null;
  const code = first.slice(0, 3);
  if (!/^[2-5]\d\d$/.test(code)) return null;
  for (const [index, line] of lines.entries()) {
    const last = index === lines.length - 1;
    if (line.slice(0, 3) !== code) return null;
    const separator = line.charAt(3);
    if (last ? separator !== " " && line.length !== 3 : separator !== "-") return null;
  }
  return { code: Number(code), text: lines.join("\n") };
}

/** The RFC 3463 enhanced status code (`5.1.1`) right after the reply code, if the server sent one. */
export function enhancedStatus(reply: SmtpReply): { klass: number; subject: number; detail: number } | null {
  const match = /^\d{3}[ -]([245])\.(\d{1,3})\.(\d{1,3})\b/.exec(reply.text);
  if (!match) return null;
  return { klass: Number(match[1]), subject: Number(match[2]), detail: Number(match[3]) };
}

const AUTH_TEXT = /authenticat|credentials|password|login/i;
/** The steps that concern the session and its sender, before any recipient: a 4xx there is the server's state, not the lead's. */
const SESSION_STAGES: ReadonlySet<SmtpStage> = new Set(["greeting", "ehlo", "starttls", "auth", "mail"]);
const RELAY_TEXT = /relay/i;

/**
 * The provider refusing the sending mailbox's own volume or store, whatever the step it answers and
 * even as a 5xx: Gmail's daily limit (`550 5.4.5 Daily user sending limit exceeded`, X.4.5 being "mail
 * system congestion"), Microsoft 365's (`554 5.2.0 STOREDRV.Submission.Exception:
 * SubmissionQuotaExceededException`), its sender's mailbox full (`554 5.2.2 mailbox full;
 * STOREDRV.Submission.Exception:QuotaExceededException`), and its throttle after repeated errors
 * (`550 5.2.251 Sender throttled due to continuous ...`). Read as the recipient's, these would bounce
 * every lead tried after the limit; a recipient's own full mailbox says none of this.
 */
const SENDER_LIMIT_TEXT = /sending (?:limit|quota)|STOREDRV\.Submission\.Exception:(?:Submission)?QuotaExceeded|Sender throttled/i;

function sendersLimit(reply: SmtpReply, status: ReturnType<typeof enhancedStatus>): boolean {
  return (status?.subject === 4 && status.detail === 5) || SENDER_LIMIT_TEXT.test(reply.text);
}

/** Classifies a reply that ended a transaction (anything other than the success the step expects). */
export function classifyReply(stage: SmtpStage, reply: SmtpReply): SmtpFailure {
  const failure = (kind: SmtpFailureKind): SmtpFailure => ({ kind, code: reply.code, text: reply.text });
  const status = enhancedStatus(reply);
  const temporary = reply.code >= 400 && reply.code < 500;
  if (reply.code === 421 || (temporary && SESSION_STAGES.has(stage)) || (reply.code >= 400 && sendersLimit(reply, status))) return failure("unavailable");
  if (temporary) return failure("transient");
  if (reply.code < 400) return failure("permanent");
  // 530 "authentication required" and 5.7.0/5.7.8 can come at MAIL or RCPT too, when a server only
  // checks the session's login there; it is the mailbox's problem, never the recipient's.
  const authProblem =
    reply.code === 530 ||
    reply.code === 534 ||
    reply.code === 535 ||
    reply.code === 538 ||
    (status?.subject === 7 && [0, 8, 9, 11, 12].includes(status.detail) && AUTH_TEXT.test(reply.text));
  switch (stage) {
    case "auth":
      return failure("auth_failed");
    case "mail":
      return failure(authProblem ? "auth_failed" : "permanent");
    case "rcpt":
      if (authProblem) return failure("auth_failed");
      if (RELAY_TEXT.test(reply.text)) return failure("permanent");
      return failure("recipient_rejected");
    case "data":
    case "message":
      // Servers that check recipients only after DATA say so with an addressing or mailbox status.
      if (status && (status.subject === 1 || status.subject === 2)) return failure("recipient_rejected");
      return failure("permanent");
    default:
      return failure("permanent");
  }
}

export function connectionFailure(text: string): SmtpFailure {
  return { kind: "connection", code: null, text };
}
