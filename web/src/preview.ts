// The sequence preview renders with the engine's own pure rules (src/sequences/): the record's
// variant (stable hash of record id and step), its spintax choices and its fields, exactly as the
// engine composes the email for that record. Only tracking, the signature and the unsubscribe
// footer are left out (they depend on the sending mailbox).
import { spin } from "../../src/sequences/spintax";
import { renderTemplate, templateIssues, type TemplateLead } from "../../src/sequences/template";
import { chooseVariant, variantWeights } from "../../src/sequences/variants";

export interface DraftVariant {
  id?: number;
  label: string;
  subject: string;
  body: string;
  percentage: string;
}

export interface DraftStep {
  id?: number;
  delayDays: string;
  subject: string;
  body: string;
  variants: DraftVariant[];
}

export interface Preview {
  step: number;
  variant: string | null;
  subject: string;
  body: string;
  problems: string[];
}

export function previewStep(step: DraftStep, seqNumber: number, recordId: number, lead: TemplateLead, firstSubject: string): Preview {
  let subject = step.subject;
  let body = step.body;
  let variant: string | null = null;
  if (step.variants.length > 0) {
    const weights = variantWeights(step.variants.map((v) => (v.percentage.trim() === "" ? null : Number(v.percentage))));
    const index = weights.ok ? chooseVariant(weights.weights, recordId, seqNumber) : 0;
    const chosen = step.variants[index]!;
    subject = chosen.subject || step.subject;
    body = chosen.body;
    variant = chosen.label || String.fromCharCode(65 + index);
  }
  const seed = { recordId, step: seqNumber };
  let renderedSubject = renderTemplate(spin(subject, { ...seed, part: "subject" }), lead, { signature: null }).replace(/[\r\n]+/g, " ").trim();
  if (!renderedSubject && seqNumber > 1) renderedSubject = /^re:/i.test(firstSubject) ? firstSubject : `Re: ${firstSubject}`;
  const renderedBody = renderTemplate(spin(body, { ...seed, part: "body" }), lead, { signature: "" });
  const problems = [...templateIssues(subject, "any"), ...templateIssues(body, "any")].map((issue) => issue.message);
  return { step: seqNumber, variant, subject: renderedSubject, body: renderedBody, problems };
}
