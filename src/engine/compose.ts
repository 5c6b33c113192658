import type { CampaignSettings } from "../schedule/settings";
import { spin } from "../sequences/spintax";
import { escapeHtml, renderTemplate, type TemplateLead } from "../sequences/template";
import { chooseVariant, variantWeights } from "../sequences/variants";
import { textPart } from "./text-part";
import type { BodySource } from "./tracked-body";
import type { MimeMessage } from "../mail/mime";

/**
 * One campaign email for one lead, as pure code: the step's variant for this record, spintax, the
 * lead's fields and the mailbox's signature, the unsubscribe footer, tracking (through the caller's
 * `track`, which rewrites links and adds the pixel), threading on the earlier emails of the
 * sequence, and the headers every email carries (our Message-ID, List-Unsubscribe with RFC 8058
 * one-click). A body without markup is text: its HTML part is the text, escaped, line by line.
 */

interface StepContent {
  seqNumber: number;
  subject: string;
  emailBody: string | null;
  variants: { id: number; subject: string; emailBody: string; percentage: number | null }[];
}

/** A stored step and its live variants, as the composer takes them. */
export function stepContent(
  step: { seqNumber: number; subject: string; emailBody: string | null },
  variants: { id: number; subject: string; emailBody: string; percentage: number | null }[],
): StepContent {
  return {
    seqNumber: step.seqNumber,
    subject: step.subject,
    emailBody: step.emailBody,
    variants: variants.map((v) => ({ id: v.id, subject: v.subject, emailBody: v.emailBody, percentage: v.percentage })),
  };
}

interface SenderIdentity {
  fromName: string;
  fromEmail: string;
  signature: string | null;
  replyTo: string | null;
}

export interface ComposeInput {
  recordId: number;
  /** The record's `spintax_modulo_index`: spintax takes option k mod n when the campaign's mode is incremental (1). */
  spintaxIndex?: number | null;
  step: StepContent;
  lead: TemplateLead & { email: string };
  sender: SenderIdentity;
  settings: Pick<CampaignSettings, "unsubscribeText" | "addUnsubscribeTag" | "sendAsPlainText" | "forcePlainText"> & Partial<Pick<CampaignSettings, "spintaxDistributionMode">>;
  /** Earlier emails of this record's sequence, oldest first. */
  thread: { messageId: string; subject: string | null }[];
  messageId: string;
  unsubscribeUrl: string;
  /** Adds open and click tracking to the HTML (identity when the campaign tracks neither); `body` says what it was rendered from. */
  track: (html: string, body?: BodySource) => Promise<string>;
}

interface Composed {
  message: MimeMessage;
  subject: string;
  variantId: number | null;
  /** The body as written for this lead, before tracking: the thread history keeps this one. */
  body: string;
}

const MARKUP = /<\/?[a-z][\s\S]*?>/i;
/** Where a text body's signature goes: the signature is HTML, so it joins after the text is escaped. */
const SIGNATURE_MARK = "\u0000signature\u0000";

function textToHtml(text: string): string {
  return text
    .split(/\r\n|\r|\n/)
    .map((line) => escapeHtml(line))
    .join("<br>\n");
}

/** The step's content for this record: its variant (stable per record and step), or the step itself. */
function pick(step: StepContent, recordId: number): { subject: string; body: string; variantId: number | null } {
  const live = step.variants;
  if (live.length > 0) {
    const weights = variantWeights(live.map((v) => v.percentage));
    const index = weights.ok ? chooseVariant(weights.weights, recordId, step.seqNumber) : 0;
    const variant = live[index]!;
    return { subject: variant.subject || step.subject, body: variant.emailBody, variantId: variant.id };
  }
  return { subject: step.subject, body: step.emailBody ?? "", variantId: null };
}

/** A follow-up without a subject answers the first email: "Re: <its subject>". */
function threadSubject(subject: string, thread: ComposeInput["thread"]): string {
  if (subject.trim() !== "" || thread.length === 0) return subject;
  const first = thread[0]!.subject ?? "";
  return /^re:/i.test(first) ? first : `Re: ${first}`;
}

export async function composeEmail(input: ComposeInput): Promise<Composed> {
  const { step, recordId, lead, sender, settings } = input;
  const chosen = pick(step, recordId);
  const incremental = settings.spintaxDistributionMode === 1 && input.spintaxIndex != null;
  const seed = { recordId, step: step.seqNumber, ...(incremental && { moduloIndex: input.spintaxIndex! }) };
  const subject = threadSubject(
    renderTemplate(spin(chosen.subject, { ...seed, part: "subject" }), lead, { signature: null }).replace(/[\r\n]+/g, " ").trim(),
    input.thread,
  );
  const template = spin(chosen.body, { ...seed, part: "body" });
  // The template's own markup decides, also for textPart's probes (whose marks replace the variables, fallbacks and all).
  const isHtml = MARKUP.test(template);
  const render = (body: string, values: TemplateLead) =>
    isHtml
      ? renderTemplate(body, values, { signature: sender.signature, html: true })
      : textToHtml(renderTemplate(body, values, { signature: SIGNATURE_MARK })).replaceAll(SIGNATURE_MARK, sender.signature ?? "");
  const rendered = render(template, lead);
  const bodyText = textPart(template, sender.signature ?? "", lead, render, rendered);

  const footerText = settings.unsubscribeText.trim() || (settings.addUnsubscribeTag ? "Unsubscribe" : "");
  const html =
    footerText === ""
      ? rendered
      : `${rendered}\n<p style="font-size:12px;color:#777"><a href="${escapeHtml(input.unsubscribeUrl)}">${escapeHtml(footerText)}</a></p>`;
  const plainOnly = settings.sendAsPlainText || settings.forcePlainText;
  const headers: Record<string, string> = {
    "Message-ID": input.messageId,
    "List-Unsubscribe": `<${input.unsubscribeUrl}>`,
    "List-Unsubscribe-Post": "List-Unsubscribe=One-Click",
  };
  if (input.thread.length > 0) {
    headers["In-Reply-To"] = input.thread.at(-1)!.messageId;
    headers.References = input.thread.map((t) => t.messageId).join(" ");
  }
  if (sender.replyTo) headers["Reply-To"] = sender.replyTo;
  const message: MimeMessage = {
    from: { email: sender.fromEmail, name: sender.fromName },
    to: { email: lead.email, name: [lead.first_name, lead.last_name].filter(Boolean).join(" ").replace(/[\r\n]+/g, " ") || undefined },
    subject,
    text: footerText === "" ? bodyText : `${bodyText}\n\n${footerText}: ${input.unsubscribeUrl}`,
    headers,
    ...(plainOnly ? {} : { html: await input.track(html, { key: sender.signature ?? "", template, render, lead, length: rendered.length }) }),
  };
  return { message, subject, variantId: chosen.variantId, body: rendered };
}
