import { OUT_OF_OFFICE_CATEGORY_ID } from "../db/schema";
import { ModelError, type ReplyModel } from "./model";
import type { CategoryChoice } from "./prompt";
import { applyRules, type RuleKind, type RuleVerdict } from "./rules";

/**
 * The categoriser (CONTRACT section 20.4): rules first, then the model for the rest, and the
 * decision about what to keep. Nothing is guessed: a rule's category outside the allowed set, an
 * automated notice, a model's low confidence, an id outside the list, a timeout or an error all
 * leave the reply without a category, flagged `needs_review`. No I/O except the model call.
 */

export const DO_NOT_CONTACT_CATEGORY_ID = 4;
const WRONG_PERSON_CATEGORY_ID = 7;

const RULE_CATEGORY: Partial<Record<RuleKind, number>> = { dnc: DO_NOT_CONTACT_CATEGORY_ID, wrong_person: WRONG_PERSON_CATEGORY_ID };

interface Categorisation {
  categoryId: number | null;
  categoryName: string | null;
  source: "rule" | "model";
  ruleId: string | null;
  model: string | null;
  promptTemplateId: number | null;
  promptVersion: string | null;
  confidence: number | null;
  needsReview: boolean;
  reason: string;
  /** The rules found an out-of-office answer the event did not flag: flag it (section 11's ignore rule reads the flag). */
  markOoo: boolean;
}

export interface CategoriseInput {
  reply: { subject: string | null; body: string | null; isOoo: boolean };
  answered: { subject: string | null; text: string | null } | null;
  /** The categories automatic categorisation may assign here (CONTRACT section 20.3), with names and sentiments. */
  allowed: CategoryChoice[];
  /** Names of every category the account can see (category 6 may be assigned outside the allowed set). */
  names: Map<number, string>;
  autoCategoriseOoo: boolean;
  prompt: { content: string; templateId: number | null; version: string };
}

interface Thresholds {
  minConfidence: number;
  dncMinConfidence: number;
}

function none(partial: Partial<Categorisation> & { reason: string }): Categorisation {
  return {
    categoryId: null,
    categoryName: null,
    source: "rule",
    ruleId: null,
    model: null,
    promptTemplateId: null,
    promptVersion: null,
    confidence: null,
    needsReview: false,
    markOoo: false,
    ...partial,
  };
}

const percent = (value: number) => `${Math.round(value * 100)}%`;

/**
 * What the rules make of an out-of-office answer (null: the reply is not one). Section 20.3: category 6
 * follows autoCategorizeOOO whatever the allowed set says, and even with automatic categorisation off
 * for the campaign; the answer is recognised either way, for section 11's ignore and reactivation rules.
 */
export function outOfOffice(input: Pick<CategoriseInput, "reply" | "names" | "autoCategoriseOoo">): Categorisation | null {
  const rules = applyRules(input.reply);
  return rules.kind === "ooo" ? oooVerdict(input, rules) : null;
}

function oooVerdict(input: Pick<CategoriseInput, "reply" | "names" | "autoCategoriseOoo">, rules: RuleVerdict): Categorisation {
  const ruled = { ruleId: rules.ruleId, source: "rule" as const, markOoo: !input.reply.isOoo };
  if (!input.autoCategoriseOoo) return none({ ...ruled, reason: `Out-of-office reply (${rules.evidence}); autoCategorizeOOO is off, so no category` });
  const name = input.names.get(OUT_OF_OFFICE_CATEGORY_ID) ?? "Out Of Office";
  return { ...none({ ...ruled, reason: `Out-of-office reply (${rules.evidence})` }), categoryId: OUT_OF_OFFICE_CATEGORY_ID, categoryName: name, confidence: 1 };
}

export async function categorise(input: CategoriseInput, model: ReplyModel | null, thresholds: Thresholds): Promise<Categorisation> {
  const rules = applyRules(input.reply);
  const allowed = new Map(input.allowed.map((c) => [c.id, c]));
  const ruled = { ruleId: rules.ruleId, source: "rule" as const };

  if (rules.kind === "ooo") return oooVerdict(input, rules);
  if (rules.kind === "automated") {
    return none({ ...ruled, needsReview: true, reason: `Automated or catch-all notice (${rules.evidence}): left for a person to review` });
  }
  let note = "";
  const ruleCategory = rules.kind ? RULE_CATEGORY[rules.kind] : undefined;
  if (ruleCategory !== undefined) {
    const choice = allowed.get(ruleCategory);
    if (choice) return { ...none({ ...ruled, reason: `Rule ${rules.ruleId} matched "${rules.evidence}"` }), categoryId: choice.id, categoryName: choice.name, confidence: 1 };
    note = `Rule ${rules.ruleId} matched "${rules.evidence}", but ${input.names.get(ruleCategory) ?? ruleCategory} is not among this campaign's categories`;
    if (!model) return none({ ...ruled, needsReview: true, reason: note });
  }
  if (!model) return none({ reason: "No rule matched and no model is configured: left uncategorised" });
  if (input.allowed.length === 0) return none({ reason: "No categories are allowed for this campaign" });

  const asked = { source: "model" as const, ruleId: rules.ruleId, model: model.id, promptTemplateId: input.prompt.templateId, promptVersion: input.prompt.version };
  const prefix = note ? `${note}. ` : "";
  let answer;
  try {
    answer = await model.classify({ prompt: input.prompt.content, categories: input.allowed, reply: { subject: input.reply.subject, text: rules.text }, answered: input.answered });
  } catch (error) {
    const message = error instanceof ModelError ? error.message : "unexpected failure";
    return none({ ...asked, needsReview: true, reason: `${prefix}Model error: ${message}` });
  }
  const said = answer.reason ? ` (${answer.reason})` : "";
  if (answer.categoryId === null) return none({ ...asked, confidence: answer.confidence, needsReview: true, reason: `${prefix}The model chose no category${said}` });
  const choice = allowed.get(answer.categoryId);
  if (!choice) {
    return none({ ...asked, confidence: answer.confidence, needsReview: true, reason: `${prefix}The model answered category ${answer.categoryId}, which is not among the allowed ones` });
  }
  if (choice.id === OUT_OF_OFFICE_CATEGORY_ID && !input.autoCategoriseOoo) {
    return none({ ...asked, confidence: answer.confidence, reason: `${prefix}The model read an out-of-office reply${said}; autoCategorizeOOO is off, so no category` });
  }
  const needed = choice.id === DO_NOT_CONTACT_CATEGORY_ID ? thresholds.dncMinConfidence : thresholds.minConfidence;
  if (answer.confidence < needed) {
    return none({
      ...asked,
      confidence: answer.confidence,
      needsReview: true,
      reason: `${prefix}The model suggested ${choice.name} at ${percent(answer.confidence)} confidence, under the ${percent(needed)} needed${said}`,
    });
  }
  return { ...none({ ...asked, confidence: answer.confidence, reason: `${prefix}${choice.name} at ${percent(answer.confidence)} confidence${said}` }), categoryId: choice.id, categoryName: choice.name };
}
