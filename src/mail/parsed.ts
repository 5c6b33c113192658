import PostalMime, { type Address } from "postal-mime";
import { utf8Prefix } from "../platform/bytes";

/**
 * A message read back from a mailbox, as the reply, out-of-office and bounce rules see it:
 * postal-mime's parse (a maintained parser that runs on Workers) reduced to plain values. Parts a
 * rule may need whole (delivery-status reports, returned messages) stay as UTF-8 text.
 */
export interface ParsedMessage {
  /** Every header in order, names lower-cased, values unfolded. */
  headers: { key: string; value: string }[];
  subject: string;
  /** The From address, lower-cased; null when absent or a group. */
  from: string | null;
  fromName: string | null;
  to: string[];
  /** The Cc addresses, lower-cased. */
  cc: string[];
  messageId: string | null;
  inReplyTo: string | null;
  /** Message-IDs of References, oldest first, angle brackets kept. */
  references: string[];
  /** The Date header as epoch ms; null when absent or unreadable. */
  date: number | null;
  text: string;
  html: string | null;
  /** Non-body parts: their MIME type, file name, size in bytes and (report types only) content as text. */
  parts: { mimeType: string; filename: string | null; size: number; content: string }[];
  /**
   * The headers of every message/rfc822 part (a forwarded message, a bounce's returned message), in
   * order. postal-mime renders such a part into the body when it is inline and the message has no
   * delivery report, keeping only its From, Subject, Date and To, so a returned Message-ID would be lost.
   */
  enclosedMessages: { headers: { key: string; value: string }[] }[];
  /** Something was left out: the message was larger than what is read, or its text or HTML was cut (the limits below). */
  truncated: boolean;
  /** The parser failed on it: only its header block was read (unparsedMessage). */
  unparsed?: boolean;
}

/**
 * What is read of a message, so that one stranger's email costs a bounded time whatever it holds
 * (postal-mime's header, address and line handling grow faster than linearly on hostile input):
 * its first PARSE_LIMIT_BYTES (the reader fetches no more), of which at most HEADER_LIMIT_BYTES of
 * header block; its text and HTML cut at TEXT_LIMIT_BYTES and HTML_LIMIT_BYTES of UTF-8 (so a
 * stored message stays far below D1's 2,000,000-byte row, whatever its script), with control
 * characters other than tab and line breaks dropped (JSON would write each as six bytes); a part's
 * content kept only for the report types the bounce rules read, cut at PART_LIMIT_CHARS. A message
 * over any of them is `truncated`; what was left out is not stored anywhere yet (R2, later).
 */
export const PARSE_LIMIT_BYTES = 256 * 1024;
const HEADER_LIMIT_BYTES = 32 * 1024;
const TEXT_LIMIT_BYTES = 64 * 1024;
const HTML_LIMIT_BYTES = 256 * 1024;
const PART_LIMIT_CHARS = 64 * 1024;
/** Parts whose text a rule reads (bounce.ts, auto-reply.ts); every other part keeps only its type, name and size. */
const READ_PART = /^(message\/|text\/rfc822-headers$)/i;

const MESSAGE_ID = /<[^<>\s]+>/g;
/** The parts that make postal-mime keep message/rfc822 parts whole (see its hasReportParts). */
const REPORT_TYPES = new Set(["message/delivery-status", "message/feedback-report"]);

function address(value: Address | undefined): { email: string | null; name: string | null } {
  if (!value || !("address" in value) || !value.address) return { email: null, name: null };
  return { email: value.address.toLowerCase(), name: value.name || null };
}

/** The plain addresses of an address list, lower-cased (a group's members are not listed). */
function addresses(list: Address[] | undefined): string[] {
  return (list ?? []).flatMap((a) => ("address" in a && a.address ? [a.address.toLowerCase()] : []));
}

function partText(content: ArrayBuffer | Uint8Array | string): string {
  return typeof content === "string" ? content : new TextDecoder().decode(content);
}

function partSize(content: ArrayBuffer | Uint8Array | string): number {
  return typeof content === "string" ? new TextEncoder().encode(content).byteLength : content.byteLength;
}

/** Where the line break that ends the header block starts (the empty line), or -1 within `bytes`. */
function headerEnd(bytes: Uint8Array): number {
  for (let at = bytes.indexOf(10); at >= 0; at = bytes.indexOf(10, at + 1)) {
    const next = bytes[at + 1] === 13 ? at + 2 : at + 1;
    if (bytes[next] === 10) return at;
  }
  return -1;
}

/** The part of a raw message that is parsed: PARSE_LIMIT_BYTES, its header block cut to HEADER_LIMIT_BYTES on a line break. */
function boundedRaw(raw: Uint8Array): { bytes: Uint8Array; truncated: boolean } {
  const bytes = raw.length > PARSE_LIMIT_BYTES ? raw.subarray(0, PARSE_LIMIT_BYTES) : raw;
  let truncated = bytes !== raw;
  const end = headerEnd(bytes);
  const headLength = end < 0 ? bytes.length : end;
  if (headLength <= HEADER_LIMIT_BYTES) return { bytes, truncated };
  const cut = bytes.lastIndexOf(10, HEADER_LIMIT_BYTES);
  const head = bytes.subarray(0, cut < 0 ? HEADER_LIMIT_BYTES : cut);
  const rest = end < 0 ? new Uint8Array(0) : bytes.subarray(end);
  const joined = new Uint8Array(head.length + rest.length);
  joined.set(head);
  joined.set(rest, head.length);
  truncated = true;
  return { bytes: joined, truncated };
}

// eslint-disable-next-line no-control-regex -- these are the characters removed
const CONTROL = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f]/g;

function cut(text: string, limitBytes: number): { text: string; cut: boolean } {
  const kept = utf8Prefix(text, limitBytes);
  return { text: kept.replace(CONTROL, ""), cut: kept.length < text.length };
}

/** A header block (up to the first empty line) as lower-cased names and unfolded values. */
export function parseHeaderBlock(text: string): { key: string; value: string }[] {
  const end = text.search(/\r?\n\r?\n/);
  const block = (end < 0 ? text : text.slice(0, end)).replace(/\r?\n[ \t]+/g, " ");
  return block.split(/\r?\n/).flatMap((line) => {
    const colon = line.indexOf(":");
    if (colon <= 0 || /\s/.test(line.slice(0, colon))) return [];
    return [{ key: line.slice(0, colon).toLowerCase(), value: line.slice(colon + 1).trim() }];
  });
}

/**
 * Parses a message read back from a mailbox, within the limits above. `fetchedPartly`: the reader
 * fetched only the message's first PARSE_LIMIT_BYTES (it was larger).
 */
export async function parseMessage(input: string | ArrayBuffer | Uint8Array, { fetchedPartly = false } = {}): Promise<ParsedMessage> {
  const bounded = boundedRaw(typeof input === "string" ? new TextEncoder().encode(input) : input instanceof Uint8Array ? input : new Uint8Array(input));
  const raw = bounded.bytes;
  // Most messages have no message/rfc822 part, and for them keeping such parts whole changes nothing,
  // so the plain parse runs a second time only when there is one to render into the body.
  const whole = await PostalMime.parse(raw, { attachmentEncoding: "utf8", forceRfc822Attachments: true });
  const enclosed = whole.attachments.filter((a) => a.mimeType === "message/rfc822");
  const rendered = enclosed.length > 0 && !whole.attachments.some((a) => REPORT_TYPES.has(a.mimeType));
  const email = rendered ? await PostalMime.parse(raw, { attachmentEncoding: "utf8" }) : whole;
  const from = address(email.from);
  const text = cut(email.text ?? "", TEXT_LIMIT_BYTES);
  const html = email.html == null ? null : cut(email.html, HTML_LIMIT_BYTES);
  const date = email.date ? Date.parse(email.date) : NaN;
  return {
    headers: email.headers.map((h) => ({ key: h.key, value: h.value })),
    subject: email.subject ?? "",
    from: from.email,
    fromName: from.name,
    to: addresses(email.to),
    cc: addresses(email.cc),
    messageId: email.messageId?.match(MESSAGE_ID)?.[0] ?? null,
    inReplyTo: email.inReplyTo?.match(MESSAGE_ID)?.[0] ?? null,
    references: email.references?.match(MESSAGE_ID) ?? [],
    date: Number.isFinite(date) ? date : null,
    text: text.text,
    html: html?.text ?? null,
    parts: email.attachments.map((a) => ({
      mimeType: a.mimeType,
      filename: a.filename,
      size: partSize(a.content),
      content: READ_PART.test(a.mimeType) ? partText(a.content).slice(0, PART_LIMIT_CHARS) : "",
    })),
    enclosedMessages: enclosed.map((a) => ({ headers: parseHeaderBlock(partText(a.content).slice(0, HEADER_LIMIT_BYTES)) })),
    truncated: fetchedPartly || bounded.truncated || text.cut || (html?.cut ?? false),
  };
}

/** The first value of a header, or null. */
export function header(message: Pick<ParsedMessage, "headers">, name: string): string | null {
  const key = name.toLowerCase();
  return message.headers.find((h) => h.key === key)?.value ?? null;
}

/**
 * What is left of a message the parser failed on: its header block (within HEADER_LIMIT_BYTES),
 * read by parseHeaderBlock, so it is still matched to our emails by In-Reply-To and References and
 * kept as unparsed rather than lost or retried for ever.
 */
export function unparsedMessage(raw: Uint8Array): ParsedMessage {
  const headers = parseHeaderBlock(new TextDecoder().decode(boundedRaw(raw).bytes.subarray(0, HEADER_LIMIT_BYTES)));
  const value = (name: string) => headers.find((h) => h.key === name)?.value ?? null;
  const ids = (name: string) => value(name)?.match(MESSAGE_ID) ?? [];
  const addressIn = (text: string | null) => text?.match(/[^\s<>",;:]+@[^\s<>",;:]+/g)?.map((a) => a.toLowerCase()) ?? [];
  const date = Date.parse(value("date") ?? "");
  return {
    headers,
    subject: value("subject") ?? "",
    from: addressIn(value("from"))[0] ?? null,
    fromName: null,
    to: addressIn(value("to")),
    cc: addressIn(value("cc")),
    messageId: ids("message-id")[0] ?? null,
    inReplyTo: ids("in-reply-to")[0] ?? null,
    references: ids("references"),
    date: Number.isFinite(date) ? date : null,
    text: "",
    html: null,
    parts: [],
    enclosedMessages: [],
    truncated: true,
    unparsed: true,
  };
}
