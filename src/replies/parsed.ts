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
}

const MESSAGE_ID = /<[^<>\s]+>/g;

function address(value: Address | undefined): { email: string | null; name: string | null } {
  if (!value || !("address" in value) || !value.address) return { email: null, name: null };
  return { email: value.address.toLowerCase(), name: value.name || null };
}

export async function parseMessage(raw: string | ArrayBuffer | Uint8Array): Promise<ParsedMessage> {
  const email = await PostalMime.parse(raw, { attachmentEncoding: "utf8" });
  const from = address(email.from);
  const date = email.date ? Date.parse(email.date) : NaN;
  return {
    headers: email.headers.map((h) => ({ key: h.key, value: h.value })),
    subject: email.subject ?? "",
    from: from.email,
    fromName: from.name,
    to: (email.to ?? []).flatMap((a) => ("address" in a && a.address ? [a.address.toLowerCase()] : [])),
    messageId: email.messageId?.match(MESSAGE_ID)?.[0] ?? null,
    inReplyTo: email.inReplyTo?.match(MESSAGE_ID)?.[0] ?? null,
    references: email.references?.match(MESSAGE_ID) ?? [],
    date: Number.isFinite(date) ? date : null,
    text: email.text ?? "",
    html: email.html ?? null,
    parts: email.attachments.map((a) => ({
      mimeType: a.mimeType,
      filename: a.filename,
      content: typeof a.content === "string" ? a.content : new TextDecoder().decode(a.content),
    })),
  };
}

/** The first value of a header, or null. */
export function header(message: Pick<ParsedMessage, "headers">, name: string): string | null {
  const key = name.toLowerCase();
  return message.headers.find((h) => h.key === key)?.value ?? null;
}
