import PostalMime, { type Address } from "postal-mime";

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
  /** Non-body parts: their MIME type, file name and content as text. */
  parts: { mimeType: string; filename: string | null; content: string }[];
  /**
   * The headers of every message/rfc822 part (a forwarded message, a bounce's returned message), in
   * order. postal-mime renders such a part into the body when it is inline and the message has no
   * delivery report, keeping only its From, Subject, Date and To, so a returned Message-ID would be lost.
   */
  enclosedMessages: { headers: { key: string; value: string }[] }[];
}

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

export async function parseMessage(raw: string | ArrayBuffer | Uint8Array): Promise<ParsedMessage> {
  // Most messages have no message/rfc822 part, and for them keeping such parts whole changes nothing,
  // so the plain parse runs a second time only when there is one to render into the body.
  const whole = await PostalMime.parse(raw, { attachmentEncoding: "utf8", forceRfc822Attachments: true });
  const enclosed = whole.attachments.filter((a) => a.mimeType === "message/rfc822");
  const rendered = enclosed.length > 0 && !whole.attachments.some((a) => REPORT_TYPES.has(a.mimeType));
  const email = rendered ? await PostalMime.parse(raw, { attachmentEncoding: "utf8" }) : whole;
  const from = address(email.from);
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
    text: email.text ?? "",
    html: email.html ?? null,
    parts: email.attachments.map((a) => ({
      mimeType: a.mimeType,
      filename: a.filename,
      content: partText(a.content),
    })),
    enclosedMessages: enclosed.map((a) => ({ headers: parseHeaderBlock(partText(a.content)) })),
  };
}

/** The first value of a header, or null. */
export function header(message: Pick<ParsedMessage, "headers">, name: string): string | null {
  const key = name.toLowerCase();
  return message.headers.find((h) => h.key === key)?.value ?? null;
}
