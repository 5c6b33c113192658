import type { SQL } from "drizzle-orm";
import type { Bindings } from "../platform/env";
import { bodyStore } from "../platform/bodies";
import type { Database } from "../platform/db";
import { enqueue } from "../webhooks/outbox";
import { enqueueReplies } from "./triage-queue";
import { planIngestion, type PlannedEvent } from "./plan";
import { offloadPlanBodies } from "./offload";
import { ingestionFits, loadIngestContext, storeIngestion, type IngestContext } from "./store";

/** The campaign an ingestion writes to, as its caller may see it, and what its events name. */
interface IngestScope {
  /** The campaign's visibility: the access rule's condition, or the account's for Salvo's own callers. */
  visible: SQL;
  accountId: number;
  campaignId: number;
  want: { recordIds: number[]; emails: string[]; categoryIds: number[] };
}

/** The context of a campaign that was found. */
export type FoundContext = IngestContext & { campaign: NonNullable<IngestContext["campaign"]> };

/**
 * The one entry point of the simple ingestion callers (the events API, tracking, inbound
 * replies): reads the context (one round trip), lets the caller turn it into planned
 * events, plans and stores them in ONE batch (events, record state, webhook deliveries), then does
 * what follows the commit. Answers null when the campaign is not visible (nothing is written).
 * With `bounded`, a plan of several events whose list parameters would not fit one D1 statement is
 * not written: the answer says `tooLarge` and the caller ingests its input in parts.
 * Callers that add statements of their own to the batch (the engine's sender, lead changes, an outbound reply's
 * SENT beside its manual send) use
 * the lower-level functions of store.ts and plan.ts, and must do the post-commit work themselves.
 */
export async function ingest(
  env: Bindings,
  db: Database,
  scope: IngestScope,
  build: (context: FoundContext) => PlannedEvent[] | Promise<PlannedEvent[]>,
  now: number,
  options: { bounded?: boolean } = {},
): Promise<{ context: FoundContext; accepted: number; tooLarge: boolean } | null> {
  const loaded = await loadIngestContext(db, scope.visible, scope.accountId, scope.campaignId, scope.want);
  if (!loaded.campaign) return null;
  const context = loaded as FoundContext;
  const planned = await build(context);
  if (planned.length === 0) return { context, accepted: 0, tooLarge: false };
  const plan = planIngestion(context, context.campaign, planned);
  if (options.bounded && planned.length > 1 && !ingestionFits(plan.rows, plan.deliveries)) return { context, accepted: 0, tooLarge: true };
  const { rows, deliveries } = await offloadPlanBodies(bodyStore(env), context.campaign.accountId, plan);
  const stored = await storeIngestion(env.DB, context.campaign, rows, deliveries, now);
  // After the commit, and only here: what the stored events set off outside D1. Their webhook
  // deliveries are queued now (the minute cron queues any a dead process missed), and new replies
  // go to categorisation (src/triage/), so every simple caller gets both.
  await enqueue(env, stored.deliveryIds);
  await enqueueReplies(env, context.campaign.id, rows);
  return { context, accepted: stored.accepted, tooLarge: false };
}
