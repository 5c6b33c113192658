import type { ValidationIssue } from "../platform/errors";
import { linkProblem } from "../tracking/links";
import { templateIssues } from "./template";
import { variantWeights } from "./variants";

export const MAX_STEPS = 20;

/** A step as the save route accepts it, aliases already resolved by the schema. */
export interface StepInput {
  id: number | null;
  seqNumber: number;
  delayInDays: number;
  subject: string;
  emailBody: string | null;
  variantDistributionType: "MANUAL_EQUAL" | "MANUAL_PERCENTAGE" | "AI_EQUAL";
  leadDistributionPercentage: number | null;
  winningMetricProperty: "OPEN_RATE" | "CLICK_RATE" | "REPLY_RATE" | "POSITIVE_REPLY_RATE" | null;
  variants: VariantInput[] | null;
}

interface VariantInput {
  id: number | null;
  label: string | null;
  subject: string;
  emailBody: string;
  percentage: number | null;
}

/** What is stored now: live steps and their live variants' ids. */
export interface StoredSequence {
  steps: { id: number; variantIds: number[] }[];
}

type SequenceProblem = { kind: "validation"; issues: ValidationIssue[] } | { kind: "foreign"; message: string };

const LABELS = "ABCDEFGHIJKLMNOPQRSTUVWXYZ";

/** The label a variant gets when none is given: A, B, C… by position. */
export function defaultLabel(position: number): string {
  return LABELS[position] ?? `V${position + 1}`;
}

function templateProblems(path: string, text: string): ValidationIssue[] {
  // Custom fields vary per lead and leads often arrive after the sequence: any custom key is allowed,
  // malformed syntax and near-misses of the standard fields are not.
  return templateIssues(text, "any").map((issue) => ({ path, message: issue.message }));
}

/** The http(s) links of each body of a sequence (tracking/links.ts `webLinks`), by body text. */
type BodyLinks = ReadonlyMap<string, readonly string[]>;

function linkProblems(path: string, seqNumber: number, body: string, links: BodyLinks): ValidationIssue[] {
  return (links.get(body) ?? []).flatMap((url) => {
    const problem = linkProblem(url);
    return problem === null ? [] : [{ path, message: `Step ${seqNumber}: the link ${JSON.stringify(url)} ${problem}` }];
  });
}

/** Every body of a sequence, steps' and variants'. */
export function sequenceBodies(steps: StepInput[]): string[] {
  return steps.flatMap((step) => [...(step.emailBody === null ? [] : [step.emailBody]), ...(step.variants ?? []).map((variant) => variant.emailBody)]);
}

/**
 * Checks a whole sequence before anything is stored: unique step numbers, a body or variants on
 * every step, templates that render, click links a redirect can carry, usable variant weights, and
 * ids that belong to this campaign (another campaign's id is a 400, not a silent new row).
 */
export function sequenceProblem(steps: StepInput[], stored: StoredSequence, links: BodyLinks = new Map()): SequenceProblem | null {
  const issues: ValidationIssue[] = [];
  const seen = new Set<number>();
  // An id given twice would be updated twice, the last one winning: a step or variant sent would be lost.
  const seenIds = { step: new Set<number>(), variant: new Set<number>() };
  const once = (kind: keyof typeof seenIds, id: number | null, path: string) => {
    if (id === null) return;
    if (seenIds[kind].has(id)) issues.push({ path, message: `id ${id} appears twice` });
    seenIds[kind].add(id);
  };
  steps.forEach((step, i) => {
    const at = `sequences.${i}`;
    if (seen.has(step.seqNumber)) issues.push({ path: `${at}.seq_number`, message: `seq_number ${step.seqNumber} appears twice` });
    seen.add(step.seqNumber);
    once("step", step.id, `${at}.id`);
    step.variants?.forEach((variant, v) => once("variant", variant.id, `${at}.seq_variants.${v}.id`));
    issues.push(...templateProblems(`${at}.subject`, step.subject));
    if (step.variants && step.variants.length > 0) {
      step.variants.forEach((variant, v) => {
        issues.push(...templateProblems(`${at}.seq_variants.${v}.subject`, variant.subject));
        issues.push(...templateProblems(`${at}.seq_variants.${v}.email_body`, variant.emailBody));
        issues.push(...linkProblems(`${at}.seq_variants.${v}.email_body`, step.seqNumber, variant.emailBody, links));
      });
      const weights = variantWeights(step.variants.map((variant) => variant.percentage));
      if (!weights.ok) issues.push({ path: `${at}.seq_variants`, message: weights.message });
    } else if (step.emailBody === null || step.emailBody.trim() === "") {
      issues.push({ path: `${at}.email_body`, message: "email_body is required on a step without variants" });
    }
    if (step.emailBody !== null) {
      issues.push(...templateProblems(`${at}.email_body`, step.emailBody));
      issues.push(...linkProblems(`${at}.email_body`, step.seqNumber, step.emailBody, links));
    }
  });
  if (issues.length > 0) return { kind: "validation", issues };

  const storedSteps = new Map(stored.steps.map((step) => [step.id, new Set(step.variantIds)]));
  const storedVariants = new Set(stored.steps.flatMap((step) => step.variantIds));
  for (const step of steps) {
    if (step.id === null) {
      // A new step's variants are new too: an id there would update that variant wherever it lives.
      const known = step.variants?.find((variant) => variant.id !== null);
      if (!known) continue;
      return storedVariants.has(known.id!)
        ? { kind: "foreign", message: `Variant ${known.id} does not belong to a new sequence step` }
        : { kind: "foreign", message: `Variant ${known.id} does not belong to this campaign` };
    }
    const variants = storedSteps.get(step.id);
    if (!variants) return { kind: "foreign", message: `Sequence step ${step.id} does not belong to this campaign` };
    for (const variant of step.variants ?? []) {
      if (variant.id !== null && !variants.has(variant.id)) {
        return { kind: "foreign", message: `Variant ${variant.id} does not belong to sequence step ${step.id}` };
      }
    }
  }
  return null;
}
