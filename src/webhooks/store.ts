import { and, asc, count, desc, eq, inArray, isNull, lt, or, sql, type SQL, type SQLWrapper } from "drizzle-orm";
import { afterCursor, pageWindow, type Page } from "../platform/paging";
import { campaigns, leadCategories, webhookAttempts, webhookDeliveries, webhooks, type WebhookScope } from "../db/schema";
import type { Bindings } from "../platform/env";
import { visibleCategories, visibleWebhooks } from "../platform/access";
import type { Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import type { Principal } from "../platform/principal";
import { enqueue, revive } from "./outbox";
import { rawBatch, statement } from "../platform/sql";

const WEBHOOK_NOT_FOUND = "Webhook not found";

export type WebhookRow = typeof webhooks.$inferSelect;

const targetColumns = {
  id: webhooks.id,
  accountId: webhooks.accountId,
  associationType: webhooks.associationType,
  name: webhooks.name,
  url: webhooks.url,
  eventTypes: webhooks.eventTypes,
  categoryIds: webhooks.categoryIds,
  createdAt: webhooks.createdAt,
};

/**
 * CONTRACT section 14, "who receives an event": a live webhook hears a campaign when it is the
 * campaign's own, its client's or its account's user-scope one. `campaign` gives the campaign's
 * values (constants, subqueries or the columns of a joined `campaigns`).
 */
function hears(campaign: { id: number | SQL | SQLWrapper; accountId: SQL | SQLWrapper; clientId: SQL | SQLWrapper }): SQL {
  return and(
    isNull(webhooks.disabledAt),
    isNull(webhooks.deletedAt),
    or(
      sql`${webhooks.campaignId} = ${campaign.id}`,
      and(
        sql`${webhooks.accountId} = ${campaign.accountId}`,
        or(eq(webhooks.associationType, "user"), and(eq(webhooks.associationType, "client"), sql`${webhooks.clientId} = ${campaign.clientId}`)),
      ),
    ),
  )!;
}

/**
 * Every live webhook that hears a campaign (`hears`), all of them. A query, so producers can put it
 * in their read batch; `campaignId` may be a subquery.
 */
export function activeWebhooks(db: Database, campaignId: number | SQL) {
  const owner = (column: string) => sql`(SELECT ${sql.raw(column)} FROM campaigns WHERE id = ${campaignId})`;
  return db
    .select(targetColumns)
    .from(webhooks)
    .where(hears({ id: campaignId, accountId: owner("account_id"), clientId: owner("client_id") }));
}

/** `activeWebhooks` of each of these campaigns (a subquery of campaign ids) in one query, each row with the campaign it hears. */
export function activeWebhooksOfCampaigns(db: Database, campaignIds: SQLWrapper) {
  return db
    // Aliased: D1's batch answers rows by column name, and the webhook's own is `id`.
    .select({ campaignId: sql<number>`${campaigns.id}`.as("heard_campaign_id"), ...targetColumns })
    .from(campaigns)
    .innerJoin(webhooks, hears({ id: campaigns.id, accountId: campaigns.accountId, clientId: campaigns.clientId }))
    .where(inArray(campaigns.id, campaignIds));
}

/**
 * The live webhooks that hear an event without a campaign (an untracked reply, a disconnected
 * mailbox): the account's user-scope ones and the client-scope ones of the mailbox's client.
 */
export function campaignlessWebhooks(db: Database, accountId: number, clientId: number | null | SQL) {
  const client = clientId === null ? sql`false` : and(eq(webhooks.associationType, "client"), sql`${webhooks.clientId} = ${clientId}`)!;
  return db
    .select(targetColumns)
    .from(webhooks)
    .where(and(eq(webhooks.accountId, accountId), isNull(webhooks.disabledAt), isNull(webhooks.deletedAt), or(eq(webhooks.associationType, "user"), client)));
}

/** The names of the lead categories an account may use, by id. */
export async function categoryNames(db: Database, accountId: number): Promise<Map<number, string>> {
  const rows = await db
    .select({ id: leadCategories.id, name: leadCategories.name })
    .from(leadCategories)
    .where(visibleCategories(accountId));
  return new Map(rows.map((row) => [row.id, row.name]));
}

/**
 * A webhook the caller may see (a `campaign`-scope one of that campaign, when given), or 404:
 * another tenant's looks the same as none.
 */
export async function findWebhook(db: Database, principal: Principal, id: number, campaignId?: number): Promise<WebhookRow> {
  const row = await db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.id, id), visibleWebhooks(principal), campaignId === undefined ? undefined : eq(webhooks.campaignId, campaignId)))
    .get();
  if (!row) throw ApiError.notFound(WEBHOOK_NOT_FOUND);
  return row;
}

/** A campaign's `campaign`-scope webhooks by id, one page. */
export function campaignWebhooks(db: Database, campaignId: number, page: Page = {}): Promise<WebhookRow[]> {
  const { limit, offset } = pageWindow(page);
  return db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.campaignId, campaignId), isNull(webhooks.deletedAt), afterCursor(webhooks.id, page)))
    .orderBy(asc(webhooks.id))
    .limit(limit)
    .offset(offset);
}

interface WebhookFilters {
  associationType?: WebhookScope;
  clientId?: number;
  campaignId?: number;
}

/** The webhooks a caller may see, narrowed by scope and target, by id (one page). */
export function listWebhooks(db: Database, principal: Principal, filters: WebhookFilters, page: Page = {}): Promise<WebhookRow[]> {
  const { limit, offset } = pageWindow(page);
  return db
    .select()
    .from(webhooks)
    .where(
      and(
        visibleWebhooks(principal),
        filters.associationType === undefined ? undefined : eq(webhooks.associationType, filters.associationType),
        filters.clientId === undefined ? undefined : eq(webhooks.clientId, filters.clientId),
        filters.campaignId === undefined ? undefined : eq(webhooks.campaignId, filters.campaignId),
        afterCursor(webhooks.id, page),
      ),
    )
    .orderBy(asc(webhooks.id))
    .limit(limit)
    .offset(offset);
}

export interface WebhookTargetKey {
  accountId: number;
  associationType: WebhookScope;
  clientId: number | null;
  campaignId: number | null;
}

/** A webhook with the same scope, target and URL (the one `webhook/create` updates without force_create). */
export function findSimilarWebhook(db: Database, key: WebhookTargetKey, url: string): Promise<WebhookRow | undefined> {
  return db
    .select()
    .from(webhooks)
    .where(
      and(
        eq(webhooks.accountId, key.accountId),
        eq(webhooks.associationType, key.associationType),
        key.clientId === null ? isNull(webhooks.clientId) : eq(webhooks.clientId, key.clientId),
        key.campaignId === null ? isNull(webhooks.campaignId) : eq(webhooks.campaignId, key.campaignId),
        eq(webhooks.url, url),
        isNull(webhooks.deletedAt),
      ),
    )
    .orderBy(asc(webhooks.id))
    .get();
}

type WebhookChanges = Partial<
  Pick<typeof webhooks.$inferInsert, "name" | "url" | "eventTypes" | "categoryIds" | "webhookType" | "secretKeyCiphertext">
> &
  Pick<typeof webhooks.$inferInsert, "updatedAt">;

/** A person's change (any update route, or a create that lands on it) also turns back on a webhook its receiver disabled with a 410 Gone: the receiver is presumed fixed. */
export function updateWebhook(db: Database, id: number, changes: WebhookChanges): Promise<WebhookRow> {
  return db
    .update(webhooks)
    .set({ ...changes, disabledAt: null })
    .where(eq(webhooks.id, id))
    .returning()
    .get();
}

/**
 * Deletes a webhook; one with deliveries still pending is only hidden (`deleted_at`) until they
 * settle (CONTRACT section 14: deliveries already queued are still tried), then `settleDeleted` removes it.
 */
export async function deleteWebhook(db: Database, id: number, now: number): Promise<void> {
  await rawBatch(db.$client, [sql`UPDATE webhooks SET deleted_at = ${now} WHERE id = ${id}`, settleDeleted(sql`${id}`)]);
}

/** Removes the deleted webhooks among `ids` (a list or subquery of ids) that have no delivery pending any more (theirs go with them). */
export function settleDeleted(ids: SQL): SQL {
  return sql`DELETE FROM webhooks WHERE id IN (${ids}) AND deleted_at IS NOT NULL
    AND NOT EXISTS (SELECT 1 FROM webhook_deliveries d WHERE d.webhook_id = webhooks.id AND d.status = 'pending')`;
}

/** Creation times in epoch ms, both ends included. */
export interface TimeWindow {
  from: number;
  to: number;
}

/** Compares the raw stored milliseconds: a window end may lie beyond what a Date can hold. */
function createdWithin({ from, to }: TimeWindow): SQL {
  return sql`${webhookDeliveries.createdAt} >= ${from} AND ${webhookDeliveries.createdAt} <= ${to}`;
}

/** How many of a campaign's deliveries created in the window are in each state, per event kind. */
export function deliveryCounts(db: Database, campaignId: number, window: TimeWindow) {
  return db
    .select({ eventType: webhookDeliveries.eventType, status: webhookDeliveries.status, n: count() })
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.campaignId, campaignId), createdWithin(window)))
    .groupBy(webhookDeliveries.eventType, webhookDeliveries.status);
}

/**
 * Sends the failed deliveries of a campaign's events created in the window again (whatever the
 * scope of their webhook), those of live webhooks only; returns the revived delivery ids.
 */
export function retryFailedDeliveries(env: Bindings, campaignId: number, window: TimeWindow): Promise<number[]> {
  const liveWebhook = sql`EXISTS (SELECT 1 FROM webhooks w WHERE w.id = ${webhookDeliveries.webhookId} AND w.disabled_at IS NULL)`;
  return revive(env, and(eq(webhookDeliveries.campaignId, campaignId), createdWithin(window), liveWebhook)!);
}

/**
 * A page of a webhook's deliveries, newest first, paged by id (`before`: only ids below it), with
 * their attempts oldest first: one batch, so rows and attempts are read at the same instant.
 */
export async function webhookDeliveryLog(db: Database, webhookId: number, page: { limit: number; before?: number; status?: string }) {
  const pageRows = db
    .select({ id: webhookDeliveries.id })
    .from(webhookDeliveries)
    .where(
      and(
        eq(webhookDeliveries.webhookId, webhookId),
        page.before === undefined ? undefined : lt(webhookDeliveries.id, page.before),
        page.status === undefined ? undefined : sql`${webhookDeliveries.status} = ${page.status}`,
      ),
    )
    .orderBy(desc(webhookDeliveries.id))
    .limit(page.limit);
  const [deliveries, attempts] = await db.batch([
    db.select().from(webhookDeliveries).where(inArray(webhookDeliveries.id, pageRows)).orderBy(desc(webhookDeliveries.id)),
    db.select().from(webhookAttempts).where(inArray(webhookAttempts.deliveryId, pageRows)).orderBy(asc(webhookAttempts.id)),
  ]);
  return { deliveries, attempts };
}

/** One delivery of one webhook with its attempts (one batch), or 404. */
export async function findDeliveryWithAttempts(db: Database, webhookId: number, deliveryId: number) {
  const [rows, attempts] = await db.batch([
    db
      .select()
      .from(webhookDeliveries)
      .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId))),
    db.select().from(webhookAttempts).where(eq(webhookAttempts.deliveryId, deliveryId)).orderBy(asc(webhookAttempts.id)),
  ]);
  if (!rows[0]) throw ApiError.notFound("Delivery not found");
  return { delivery: rows[0], attempts };
}

/** One delivery of one webhook, or 404. */
export async function findDelivery(db: Database, webhookId: number, deliveryId: number) {
  const row = await db
    .select()
    .from(webhookDeliveries)
    .where(and(eq(webhookDeliveries.id, deliveryId), eq(webhookDeliveries.webhookId, webhookId)))
    .get();
  if (!row) throw ApiError.notFound("Delivery not found");
  return row;
}

/**
 * Sends one settled delivery again, as the same row (same `webhook-id`, so a receiver that got an
 * earlier attempt can drop the repeat), due now; a pending one is left to its schedule. Returns
 * whether it was revived.
 */
export async function redeliver(env: Bindings, deliveryId: number): Promise<boolean> {
  const now = Date.now();
  const rows = await statement(
    env.DB,
    sql`UPDATE webhook_deliveries SET status = 'pending', next_attempt_at = ${now}, delivered_at = NULL
        WHERE id = ${deliveryId} AND status <> 'pending'
          AND EXISTS (SELECT 1 FROM webhooks w WHERE w.id = webhook_deliveries.webhook_id AND w.disabled_at IS NULL) RETURNING id`,
  ).all<{ id: number }>();
  await enqueue(env, rows.results.map((row) => row.id));
  return rows.results.length > 0;
}
