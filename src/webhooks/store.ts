import { and, eq, isNull, type SQL } from "drizzle-orm";
import { webhooks } from "../db/schema";
import type { Database } from "../platform/db";

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
