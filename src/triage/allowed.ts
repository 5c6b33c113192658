import { sentimentOf, type Sentiment } from "../categories/rules";
import { settingsOf } from "../schedule/settings";
import { DEFAULT_PROMPT, DEFAULT_PROMPT_VERSION, type CategoryChoice } from "./prompt";

/**
 * What a campaign lets automatic categorisation do (CONTRACT section 20.3), pure: whether it runs,
 * which categories it may assign, and which prompt the model gets.
 */

export interface VisibleCategory {
  id: number;
  name: string;
  /** Null for the built-in ones (their sentiment is the contract's); "positive" / "negative" / null for the account's own. */
  accountId: number | null;
  sentimentType: string | null;
}

export interface ActiveTemplate {
  id: number;
  promptContent: string;
  categories: number[];
  version: number;
}

export interface CampaignTriage {
  /** False when the campaign's auto_categorise_reply is off. */
  enabled: boolean;
  autoCategoriseOoo: boolean;
  allowed: CategoryChoice[];
  names: Map<number, string>;
  prompt: { content: string; templateId: number | null; version: string };
}

export function sentimentOfCategory(category: Pick<VisibleCategory, "id" | "accountId" | "sentimentType">): Sentiment {
  if (category.accountId === null) return sentimentOf(category.id);
  return category.sentimentType === "positive" || category.sentimentType === "negative" ? category.sentimentType : "neutral";
}

/**
 * `ai_categorisation_options` as category ids: numbers, decimal strings, or `{id, label?}` objects
 * (both forms are seen in clients). Any other shape yields nothing (stored and ignored, as before).
 */
function optionIds(value: unknown): number[] {
  if (!Array.isArray(value)) return [];
  const ids = value.flatMap((item) => {
    const raw = typeof item === "object" && item !== null && "id" in item ? (item as { id: unknown }).id : item;
    if (typeof raw === "number" && Number.isInteger(raw) && raw > 0) return [raw];
    if (typeof raw === "string" && /^[1-9]\d{0,9}$/.test(raw)) return [Number(raw)];
    return [];
  });
  return [...new Set(ids)];
}

/**
 * The allowed set for a reply: the active template's categories, else a non-empty
 * `ai_categorisation_options`, else every category the account can use. Ids the account cannot
 * see (deleted, another account's) are dropped.
 */
export function campaignTriage(settingsJson: Record<string, unknown> | null, template: ActiveTemplate | null, visible: VisibleCategory[]): CampaignTriage {
  const settings = settingsOf(settingsJson);
  const byId = new Map(visible.map((c) => [c.id, c]));
  const choose = (ids: number[]) => ids.flatMap((id) => (byId.has(id) ? [byId.get(id)!] : []));
  const fromOptions = choose(optionIds(settings.stored.ai_categorisation_options));
  const chosen = template ? choose(template.categories) : fromOptions.length > 0 ? fromOptions : visible;
  return {
    enabled: settings.autoCategoriseReply,
    autoCategoriseOoo: settings.outOfOffice.autoCategorizeOOO,
    allowed: chosen.map((c) => ({ id: c.id, name: c.name, sentiment: sentimentOfCategory(c) })),
    names: new Map(visible.map((c) => [c.id, c.name])),
    prompt: template
      ? { content: template.promptContent, templateId: template.id, version: `${template.id}.${template.version}` }
      : { content: DEFAULT_PROMPT, templateId: null, version: DEFAULT_PROMPT_VERSION },
  };
}

/**
 * The campaign's triage with a prompt or categories being tried (the test route, dry-run replays):
 * what a template with them would give, without saving one. Its prompt version reads `draft`.
 */
export function withTrial(
  base: CampaignTriage,
  settingsJson: Record<string, unknown> | null,
  visible: VisibleCategory[],
  trial: { promptContent: string | null; categories: number[] | null },
): CampaignTriage {
  if (trial.promptContent === null && trial.categories === null) return base;
  const content = trial.promptContent ?? base.prompt.content;
  const tried = campaignTriage(settingsJson, { id: 0, promptContent: content, categories: trial.categories ?? base.allowed.map((c) => c.id), version: 0 }, visible);
  return { ...tried, enabled: base.enabled, prompt: trial.promptContent === null ? base.prompt : { content, templateId: null, version: "draft" } };
}
