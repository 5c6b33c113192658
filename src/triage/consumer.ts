import { config, type CategoriserConfig } from "../config";
import { OUT_OF_OFFICE_CATEGORY_ID } from "../db/schema";
import type { Bindings } from "../platform/env";
import { database, type Database } from "../platform/db";
import { rawBatch } from "../platform/sql";
import { wakeCampaigns } from "../mailboxes/wake";
import { deliveryIds, enqueue } from "../webhooks/outbox";
import type { CampaignTriage } from "./allowed";
import { categorise, outOfOffice } from "./categoriser";
import {
  categoryChangeDeliveries,
  categoryStatements,
  deliveryStatement,
  doNotContactWinners,
  insertCategorisations,
  optOutDeliveryIds,
  optOutStatements,
  oooReopenStatement,
  type Outcome,
  type StoredCategorisation,
} from "./effects";
import { configuredModel, type ReplyModel, type WorkersAiBinding } from "./model";
import { RULES_VERSION } from "./rules";
import { campaignContexts, namedReplies, type CampaignContext, type ReplyRow } from "./store";

/**
 * The queue consumer's work: categorise the replies an ingestion committed (CONTRACT section
 * 20.4), off the request path. One read for the replies, one per campaign for its context, the
 * model calls (a few at a time), then ONE write batch for everything they cause.
 */

const MODEL_CONCURRENCY = 4;

/** Replies read from a mailbox carry event ids the reader derives from the message (src/replies/inbound.ts). */
const fromMailbox = (reply: ReplyRow) => reply.event_id?.startsWith("imap:") ?? false;

/** A reply that came with its category: the event's (or, read from a mailbox, the out-of-office rule's). */
function given(reply: ReplyRow, names: Map<number, string>): StoredCategorisation {
  const base = { categoryId: reply.category_id, categoryName: names.get(reply.category_id!) ?? null, model: null, promptTemplateId: null, promptVersion: null, needsReview: false };
  if (fromMailbox(reply) && reply.category_id === OUT_OF_OFFICE_CATEGORY_ID) {
    return { ...base, source: "rule", ruleId: `ooo.flagged@${RULES_VERSION}`, confidence: 1, reason: "Out-of-office answer recognised by the mailbox reader (autoCategorizeOOO)" };
  }
  return { ...base, source: "event", ruleId: null, confidence: null, reason: "Given with the event" };
}

interface DecideOptions {
  model: ReplyModel | null;
  thresholds: Pick<CategoriserConfig, "minConfidence" | "dncMinConfidence">;
  /** A replay's prompt and categories instead of the campaign's (dry runs only). */
  triage?: CampaignTriage;
}

/** What to store for one reply; never throws for a model's failure (that is the needs-review lane). */
export async function decideReply(reply: ReplyRow, context: CampaignContext, options: DecideOptions): Promise<Outcome> {
  const triage = options.triage ?? context.triage;
  if (reply.category_id !== null) return { reply, context, stored: given(reply, triage.names), markOoo: false };
  if (!triage.enabled) {
    const ooo = outOfOffice({ reply: { subject: reply.subject, body: reply.body, isOoo: reply.is_ooo === 1 }, names: triage.names, autoCategoriseOoo: triage.autoCategoriseOoo });
    if (ooo) {
      const { markOoo, ...stored } = ooo;
      return { reply, context, stored, markOoo };
    }
    const off: StoredCategorisation = { categoryId: null, categoryName: null, source: "off", ruleId: null, model: null, promptTemplateId: null, promptVersion: null, confidence: null, needsReview: false, reason: "Automatic categorisation is off for this campaign" };
    return { reply, context, stored: off, markOoo: false };
  }
  const result = await categorise(
    {
      reply: { subject: reply.subject, body: reply.body, isOoo: reply.is_ooo === 1 },
      answered: reply.sent_subject === null && reply.sent_body === null ? null : { subject: reply.sent_subject, text: reply.sent_body },
      allowed: triage.allowed,
      names: triage.names,
      autoCategoriseOoo: triage.autoCategoriseOoo,
      prompt: triage.prompt,
    },
    options.model,
    options.thresholds,
  );
  const { markOoo, ...stored } = result;
  return { reply, context, stored, markOoo };
}

/** Runs `work` over the items, at most `limit` at a time, keeping their order. */
export async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      out[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}

/** The configured model for this environment (null: rules only). */
export function modelOf(env: Bindings): ReplyModel | null {
  return configuredModel(config(env).categoriser, env.AI as unknown as WorkersAiBinding | undefined);
}

/** Stores outcomes in ONE batch and hands the deliveries it made to the webhook queue. */
export async function commitOutcomes(env: Bindings, db: Database, outcomes: Outcome[], now: number): Promise<void> {
  if (outcomes.length === 0) return;
  const nonce = crypto.randomUUID();
  const reopen = oooReopenStatement(outcomes, nonce, now);
  const statements = [insertCategorisations(outcomes, nonce, now), ...categoryStatements(outcomes, nonce, now, reopen)];
  const reopenAt = reopen ? statements.indexOf(reopen) : -1;
  const deliveries = categoryChangeDeliveries(outcomes, nonce);
  const deliveryAt = deliveries.length > 0 ? statements.push(deliveryStatement(deliveries, now)) - 1 : -1;
  const optOut = await optOutStatements(db, doNotContactWinners(outcomes), nonce, now);
  const optOutAt = statements.length;
  statements.push(...optOut.statements);
  const results = await rawBatch(env.DB, statements);
  await enqueue(env, [...(deliveryAt >= 0 ? deliveryIds(results[deliveryAt]) : []), ...optOutDeliveryIds(results, optOut, optOutAt)]);
  // A record reopened into INPROGRESS has a step due: its mailboxes' agents learn of it now (paused ones on resume).
  const reopened = reopenAt >= 0 ? new Set((results[reopenAt] ?? []).map((row) => Number(row.campaign_id))) : new Set<number>();
  await wakeCampaigns(env, [...reopened]);
}

/**
 * Categorises the named replies that have no categorisation yet. Returns how many it stored.
 * With CATEGORISER=off nothing is read or written.
 */
export async function triageReplies(env: Bindings, pairs: { campaignId: number; eventId: string }[], rowIds: number[], now = Date.now()): Promise<number> {
  const settings = config(env).categoriser;
  if (settings.kind === "off") return 0;
  const replies = (await namedReplies(env.DB, env.BODIES, pairs, rowIds)).filter((reply) => reply.done_source === null);
  if (replies.length === 0) return 0;
  const db = database(env.DB);
  const contexts = await campaignContexts(db, [...new Set(replies.map((reply) => reply.campaign_id))]);
  const model = modelOf(env);
  const pending = replies.filter((reply) => contexts.has(reply.campaign_id));
  const outcomes = await mapLimited(pending, MODEL_CONCURRENCY, (reply) => decideReply(reply, contexts.get(reply.campaign_id)!, { model, thresholds: settings }));
  await commitOutcomes(env, db, outcomes, now);
  return outcomes.length;
}
