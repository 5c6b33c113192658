import { firstElementAt, htmlToText } from "../mail/html-text";
import type { ParsedMessage } from "../mail/parsed";

/**
 * The new text of a reply: what the sender wrote above the quoted history and the signature.
 * Clients mark the history in many ways (an attribution line, an "Original Message" rule, Outlook's
 * header block, `>` quoting, Gmail's quote container in HTML); the earliest marker wins.
 */

// HTML containers that hold the quoted history: Gmail, Outlook (web and desktop), Apple Mail, Yahoo, Zimbra.
// Found by parsing (firstElementAt), not by a regular expression: a pattern over a tag's attributes
// scans to the next ">" from every "<div", quadratic on a stranger's unclosed tags.
const QUOTE_CLASSES = new Set(["gmail_quote", "yahoo_quoted", "zmail_extra"]);
const QUOTE_IDS = new Set(["appendonsend", "divRplyFwdMsg"]);

function isQuoteContainer(name: string, attributes: Record<string, string>): boolean {
  if (name !== "div" && name !== "blockquote") return false;
  if ((attributes.class ?? "").split(/[ \t\n\f\r]+/).some((c) => QUOTE_CLASSES.has(c))) return true;
  return QUOTE_IDS.has(attributes.id ?? "") || (attributes.type ?? "").toLowerCase() === "cite";
}

// A line that alone announces the history ("-----Original Message-----" and its translations, forwards).
const RULE =
  /^\s*-{2,}\s*(?:original message|ursprüngliche nachricht|originalnachricht|message d'origine|message original|mensaje original|messaggio originale|oorspronkelijk bericht|origineel bericht|mensagem original|forwarded message|weitergeleitete nachricht|message transféré|mensaje reenviado|messaggio inoltrato|doorgestuurd bericht|mensagem encaminhada)\s*-{2,}\s*$/i;

// "On <date>, <name> wrote:" and its localised forms; Gmail may wrap it over two or three lines.
const ATTRIBUTION = [
  /^on\b.{0,300}\bwrote\s*:\s*$/i,
  /^am\b.{0,300}\bschrieb\b.{0,200}:\s*$/i,
  /^le\b.{0,300}\ba écrit\s*:\s*$/i,
  /^el\b.{0,300}\bescribió\s*:\s*$/i,
  /^il\b.{0,300}\bha scritto\s*:\s*$/i,
  /^op\b.{0,300}\bschreef\b.{0,200}:\s*$/i,
  /^em\b.{0,300}\bescreveu\s*:\s*$/i,
];

// "<name> wrote:" without a date: only history when quoted lines follow.
const SHORT_ATTRIBUTION = /^.{1,200}\b(?:wrote|schrieb|a écrit|escribió|ha scritto|schreef|escreveu)\s*:\s*$/i;

// Outlook's header block: From, then Sent/Date, To, Subject within the next lines.
const BLOCK_FROM = /^\s*\*?(?:from|von|de|da|van)\s*:\*?\s*\S/i;
const BLOCK_SENT = /^\s*\*?(?:sent|date|gesendet|datum|envoyé|enviado|fecha|inviato|data|verzonden|verstuurd)\s*:/i;
const BLOCK_SUBJECT = /^\s*\*?(?:subject|betreff|objet|asunto|oggetto|onderwerp|assunto)\s*:/i;

const SIGNATURE = /^--\s?$/;
const QUOTED = /^\s*>/;

/** How many lines the attribution starting at line i spans; 0 when there is none. */
function attributionAt(lines: string[], i: number): number {
  const first = lines[i]!.trim();
  if (!first) return 0;
  for (let span = 1; span <= 3 && i + span <= lines.length; span++) {
    const joined = lines
      .slice(i, i + span)
      .map((line) => line.trim())
      .join(" ");
    if (ATTRIBUTION.some((pattern) => pattern.test(joined))) return span;
  }
  if (SHORT_ATTRIBUTION.test(first)) {
    const next = lines.slice(i + 1).find((line) => line.trim() !== "");
    return next !== undefined && QUOTED.test(next) ? 1 : 0;
  }
  return 0;
}

function outlookBlockAt(lines: string[], i: number): boolean {
  if (!BLOCK_FROM.test(lines[i]!)) return false;
  const following = lines.slice(i + 1, i + 7);
  const sent = following.findIndex((line) => BLOCK_SENT.test(line));
  return sent >= 0 && following.slice(sent + 1).some((line) => BLOCK_SUBJECT.test(line));
}

function historyStart(lines: string[], from: number): number {
  for (let i = from; i < lines.length; i++) {
    if (RULE.test(lines[i]!) || attributionAt(lines, i) > 0 || outlookBlockAt(lines, i)) return i;
  }
  return lines.length;
}

const tidy = (lines: string[]) =>
  lines
    .join("\n")
    // Outlook draws a rule above its header block: underscores in text, an <hr> (dashes once converted) in HTML.
    .replace(/\n[ \t]*(?:_{8,}|-{8,})[ \t]*$/, "")
    .replace(/\n{3,}/g, "\n\n")
    .trim();

/** The body as text, with Gmail's (and other clients') HTML quote container dropped when there is one. */
function bodyText(message: Pick<ParsedMessage, "text" | "html">): string {
  const html = message.html;
  const whole = message.text.trim() || !html ? message.text : htmlToText(html);
  if (html) {
    const quote = firstElementAt(html, isQuoteContainer);
    const above = quote !== null ? htmlToText(html.slice(0, quote)) : "";
    // Nothing above the container means an answer written below the quote: the text rules find it.
    if (above) return above;
  }
  return whole;
}

function ownWords(text: string): string[] {
  const lines = text.replace(/\r\n?/g, "\n").split("\n");
  // An offset rather than slicing the rest at each attribution: a run of them would be quadratic.
  for (let from = 0; ; ) {
    const start = historyStart(lines, from);
    const kept = lines.slice(from, start).filter((line) => !QUOTED.test(line));
    const span = start < lines.length ? attributionAt(lines, start) : 0;
    // Bottom-posting: nothing above the attribution, so the answer is what follows the quote.
    if (tidy(kept) || span === 0) return kept;
    from = start + span;
  }
}

export function replyText(message: Pick<ParsedMessage, "text" | "html">): string {
  const kept = ownWords(bodyText(message));
  const signature = kept.findIndex((line) => SIGNATURE.test(line));
  if (signature >= 0) {
    // A message that is only a signature block keeps it rather than coming out empty.
    const above = tidy(kept.slice(0, signature));
    if (above) return above;
  }
  return tidy(kept);
}
