import { and, asc, count, eq, isNull, sql, type SQL } from "drizzle-orm";
import { afterCursor, pageWindow, type Page } from "../campaigns/paging";
import { campaigns, leadCategories, webhookDeliveries, webhooks } from "../db/schema";
import type { Bindings } from "../env";
import { visibleCampaigns, visibleCategories } from "../platform/access";
import type { Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import type { Principal } from "../platform/principal";
import { revive } from "./outbox";

export const WEBHOOK_NOT_FOUND = "Webhook not found";

export type WebhookRow = typeof webhooks.$inferSelect;

/** A campaign's live webhooks as fan-out needs them (a query, so producers can put it in their read batch). */
export function activeWebhooks(db: Database, campaignId: number | SQL) {
  return db
    .select({
      id: webhooks.id,
      accountId: webhooks.accountId,
      campaignId: webhooks.campaignId,
      name: webhooks.name,
      eventTypes: webhooks.eventTypes,
      categoryIds: webhooks.categoryIds,
    })
    .from(webhooks)
    .where(and(eq(webhooks.campaignId, campaignId), isNull(webhooks.disabledAt)));
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
 * A webhook of a campaign the caller may see (of that campaign, when given), or 404: another
 * tenant's looks the same as none.
 */
export async function findWebhook(db: Database, principal: Principal, id: number, campaignId?: number): Promise<WebhookRow> {
  const row = await db
    .select({ webhook: webhooks })
    .from(webhooks)
    .innerJoin(campaigns, eq(campaigns.id, webhooks.campaignId))
    .where(and(eq(webhooks.id, id), visibleCampaigns(principal), campaignId === undefined ? undefined : eq(webhooks.campaignId, campaignId)))
    .get();
  if (!row) throw ApiError.notFound(WEBHOOK_NOT_FOUND);
  return row.webhook;
}

/** A campaign's webhooks, oldest first. */
/** A campaign's webhooks by id, one page. */
export function campaignWebhooks(db: Database, campaignId: number, page: Page = {}): Promise<WebhookRow[]> {
  const { limit, offset } = pageWindow(page);
  return db
    .select()
    .from(webhooks)
    .where(and(eq(webhooks.campaignId, campaignId), afterCursor(webhooks.id, page)))
    .orderBy(asc(webhooks.id))
    .limit(limit)
    .offset(offset);
}

export type WebhookChanges = Pick<typeof webhooks.$inferInsert, "name" | "url" | "eventTypes" | "categoryIds" | "secretKeyCiphertext" | "updatedAt">;

export function updateWebhook(db: Database, id: number, changes: WebhookChanges): Promise<WebhookRow> {
  return db.update(webhooks).set(changes).where(eq(webhooks.id, id)).returning().get();
}

export async function deleteWebhook(db: Database, id: number): Promise<void> {
  await db.delete(webhooks).where(eq(webhooks.id, id));
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
 * Sends a campaign's failed deliveries created in the window again, those of its live webhooks
 * only; returns the revived delivery ids.
 */
export function retryFailedDeliveries(env: Bindings, campaignId: number, window: TimeWindow): Promise<number[]> {
  const liveWebhook = sql`${webhookDeliveries.webhookId} IN (SELECT ${webhooks.id} FROM ${webhooks} WHERE ${webhooks.campaignId} = ${campaignId} AND ${webhooks.disabledAt} IS NULL)`;
  return revive(env, and(eq(webhookDeliveries.campaignId, campaignId), createdWithin(window), liveWebhook)!);
}
