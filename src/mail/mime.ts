/**
 * The MIME form of a campaign email (issue 13, item 3): 7-bit clean, so any SMTP server takes it.
 * multipart/alternative with a plain and an HTML part, or a single text/plain part when there is no
 * HTML (a campaign's plain-text sending). Bodies are quoted-printable UTF-8; header words outside
 * ASCII are RFC 2047 encoded-words; the caller's own headers (Message-ID, List-Unsubscribe,
 * In-Reply-To, ...) go out as given, after a check that none could inject a line.
 */
import { needsSmtpUtf8, smtpAddress } from "./address";
import { hexOctet, toBase64 } from "../platform/bytes";

interface Mailbox {
  email: string;
  name?: string;
}

export interface MimeMessage {
  from: Mailbox | string;
  to: Mailbox | string;
  subject: string;
  text: string;
  html?: string;
  /** Extra headers, e.g. Message-ID, List-Unsubscribe, List-Unsubscribe-Post, In-Reply-To, References. */
  headers?: Record<string, string>;
  /** Files sent with the message (replies from the inbox): the body then goes in multipart/mixed. */
  attachments?: MimeAttachment[];
}

export interface MimeAttachment {
  filename: string;
  contentType: string;
  content: Uint8Array;
}

/** Headers the MIME structure owns; a caller setting them would corrupt the message. */
const STRUCTURAL = new Set(["mime-version", "content-type", "content-transfer-encoding"]);
/** Headers built from the message's own fields. */
const FROM_FIELDS = new Set(["from", "to", "subject"]);

const HEADER_NAME = /^[!-9;-~]+$/;
export function mailbox(value: Mailbox | string): Mailbox {
  return typeof value === "string" ? { email: value } : value;
}

const encoder = new TextEncoder();

/** Each byte as quoted-printable writes it: itself when printable (a space or tab too, unless it ends a line), else `=XX`. */
const ENCODED = Array.from({ length: 256 }, (_, byte) => `=${hexOctet(byte).toUpperCase()}`);
const TOKEN = ENCODED.map((encoded, byte) => ((byte >= 0x21 && byte <= 0x7e && byte !== 0x3d) || byte === 0x20 || byte === 0x09 ? String.fromCharCode(byte) : encoded));

/**
 * Quoted-printable (RFC 2045 6.7) of UTF-8 text, lines ending CRLF (any of CRLF, CR, LF in), none
 * longer than 76 characters. One pass over the bytes with a table: every campaign email's parts go
 * through here.
 */
export function quotedPrintable(text: string): string {
  const bytes = encoder.encode(text);
  let out = "";
  let width = 0;
  for (let index = 0; index < bytes.length; index += 1) {
    const byte = bytes[index]!;
    if (byte === 0x0d || byte === 0x0a) {
      if (byte === 0x0d && bytes[index + 1] === 0x0a) index += 1;
      out += "\r\n";
      width = 0;
      continue;
    }
    const next = bytes[index + 1];
    const endsLine = next === undefined || next === 0x0a || next === 0x0d;
    let token = (byte === 0x20 || byte === 0x09) && endsLine ? ENCODED[byte]! : TOKEN[byte]!;
    if (width + token.length > 75) {
      out += "=\r\n";
      width = 0;
    }
    // A leading dot is encoded too, so no line of the body can end the SMTP DATA by itself.
    if (width === 0 && byte === 0x2e) token = ENCODED[byte]!;
    out += token;
    width += token.length;
  }
  return out;
}

/** RFC 2047 B encoded-words for a header value outside ASCII, each at most 75 characters, split on characters. */
export function encodeWords(value: string): string {
  if (/^[\x20-\x7e]*$/.test(value)) return value;
  const words: string[] = [];
  let chunk = "";
  // 45 bytes of UTF-8 become 60 base64 characters: with "=?UTF-8?B?" and "?=" that is 72.
  for (const char of value) {
    if (encoder.encode(chunk + char).length > 45) {
      words.push(chunk);
      chunk = "";
    }
    chunk += char;
  }
  if (chunk) words.push(chunk);
  return words.map((word) => `=?UTF-8?B?${toBase64(encoder.encode(word))}?=`).join("\r\n ");
}

function formatMailbox(value: Mailbox): string {
  if (!value.name) return `<${value.email}>`;
  const name = /^[\x20-\x7e]*$/.test(value.name) ? `"${value.name.replace(/["\\]/g, "\\$&")}"` : encodeWords(value.name);
  return `${name} <${value.email}>`;
}

/** RFC 5322 date in UTC, e.g. `Sun, 22 Nov 2026 22:17:03 +0000`. */
export function rfc5322Date(date: Date): string {
  return date.toUTCString().replace(/GMT$/, "+0000");
}

function boundary(): string {
  const bytes = crypto.getRandomValues(new Uint8Array(18));
  return `=_salvo_${toBase64(bytes).replace(/[+/=]/g, "_")}`;
}

function checkHeader(name: string, value: string): void {
  if (!HEADER_NAME.test(name)) throw new TypeError(`invalid header name ${JSON.stringify(name)}`);
  if (/[\r\n]/.test(value)) throw new TypeError(`header ${name} must not contain a line break`);
  const lower = name.toLowerCase();
  if (STRUCTURAL.has(lower) || FROM_FIELDS.has(lower)) throw new TypeError(`header ${name} is set by the MIME builder`);
}

/** The mailbox with its address as sent (domain in A-labels); a header stays 7-bit, so a non-ASCII local part is refused. */
function onTheWire(value: Mailbox): Mailbox {
  const email = smtpAddress(value.email);
  if (email === null) throw new TypeError(`invalid address ${JSON.stringify(value.email)}`);
  if (needsSmtpUtf8(email)) throw new TypeError(`the address ${JSON.stringify(value.email)} needs SMTPUTF8, which Salvo does not send`);
  if (value.name && /[\r\n]/.test(value.name)) throw new TypeError("a display name must not contain a line break");
  return { ...value, email };
}

/**
 * The message as sent after DATA (CRLF line ends, no dot-stuffing: that is the SMTP layer's).
 * Adds Date and Message-ID when the caller's headers have none (the latter as `<uuid@sender domain>`).
 * Throws TypeError on an invalid address or a header that could break the message.
 */
export function buildMime(message: MimeMessage, now = new Date()): { raw: string; messageId: string } {
  const from = onTheWire(mailbox(message.from));
  const to = onTheWire(mailbox(message.to));
  if (/[\r\n]/.test(message.subject)) throw new TypeError("the subject must not contain a line break");
  const extra = Object.entries(message.headers ?? {});
  for (const [name, value] of extra) checkHeader(name, value);
  const has = (name: string) => extra.some(([key]) => key.toLowerCase() === name);
  let messageId = extra.find(([key]) => key.toLowerCase() === "message-id")?.[1];
  const headers: string[] = [`From: ${formatMailbox(from)}`, `To: ${formatMailbox(to)}`, `Subject: ${encodeWords(message.subject)}`];
  if (!has("date")) headers.push(`Date: ${rfc5322Date(now)}`);
  if (messageId === undefined) {
    messageId = `<${crypto.randomUUID()}@${from.email.split("@")[1]}>`;
    headers.push(`Message-ID: ${messageId}`);
  }
  for (const [name, value] of extra) headers.push(`${name}: ${encodeWords(value)}`);
  headers.push("MIME-Version: 1.0");

  const part = (type: string, body: string) =>
    `Content-Type: ${type}; charset=UTF-8\r\nContent-Transfer-Encoding: quoted-printable\r\n\r\n${quotedPrintable(body)}`;
  let content: { type: string | null; body: string };
  if (message.html === undefined) {
    content = { type: null, body: part("text/plain", message.text) };
  } else {
    const mark = boundary();
    content = {
      type: `multipart/alternative; boundary="${mark}"`,
      body: `--${mark}\r\n${part("text/plain", message.text)}\r\n--${mark}\r\n${part("text/html", message.html)}\r\n--${mark}--`,
    };
  }
  if (message.attachments?.length) {
    const mark = boundary();
    const first = content.type ? `Content-Type: ${content.type}\r\n\r\n${content.body}` : content.body;
    const parts = [first, ...message.attachments.map(attachmentPart)];
    content = { type: `multipart/mixed; boundary="${mark}"`, body: `${parts.map((p) => `--${mark}\r\n${p}`).join("\r\n")}\r\n--${mark}--` };
  }
  if (content.type === null) return { raw: `${headers.join("\r\n")}\r\n${content.body}\r\n`, messageId };
  headers.push(`Content-Type: ${content.type}`);
  return { raw: `${headers.join("\r\n")}\r\n\r\n${content.body}\r\n`, messageId };
}

/** A quoted parameter value, or RFC 2047 words for a name outside ASCII (what mail clients read). */
function parameter(value: string): string {
  const clean = value.replace(/[\r\n"\\]/g, "_");
  return /^[\x20-\x7e]*$/.test(clean) ? `"${clean}"` : `"${encodeWords(clean).replace(/\r\n /g, " ")}"`;
}

function attachmentPart(file: MimeAttachment): string {
  const type = /^[\w.+-]+\/[\w.+-]+$/.test(file.contentType) ? file.contentType : "application/octet-stream";
  const lines = toBase64(file.content).match(/.{1,76}/g) ?? [];
  return (
    `Content-Type: ${type}; name=${parameter(file.filename)}\r\n` +
    `Content-Disposition: attachment; filename=${parameter(file.filename)}\r\n` +
    `Content-Transfer-Encoding: base64\r\n\r\n${lines.join("\r\n")}`
  );
}
