import { and, eq, sql } from "drizzle-orm";
import { campaigns, type CampaignStatus } from "../db/schema";
import { visibleCampaigns, CAMPAIGN_NOT_FOUND } from "../platform/access";
import type { Principal } from "../platform/auth";
import type { Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { rawBatch } from "../platform/sql";
import { deliveryIds, insertDeliveries, type NewDelivery } from "../webhooks/outbox";
import { activeWebhooks } from "../webhooks/store";

/** The campaign (or the contract's 404) and its live webhooks, in one round trip. */
export async function loadStatusChange(db: Database, principal: Principal, campaignId: number) {
  const [found, webhooks] = await db.batch([
    db.select().from(campaigns).where(and(eq(campaigns.id, campaignId), visibleCampaigns(principal))),
    activeWebhooks(db, campaignId),
  ]);
  const campaign = found[0];
  if (!campaign) throw ApiError.notFound(CAMPAIGN_NOT_FOUND);
  return { campaign, webhooks };
}

/**
 * Moves the campaign from the status it was read with to `next`, with its webhook deliveries in
 * the same batch: a concurrent change that got there first leaves this one (and its deliveries)
 * without effect. Returns the stored delivery ids.
 */
export async function changeStatus(
  d1: D1Database,
  campaign: { id: number; status: CampaignStatus },
  next: CampaignStatus,
  deliveries: NewDelivery[],
  now: number,
): Promise<number[]> {
  const results = await rawBatch(d1, [
    sql`UPDATE campaigns SET status = ${next}, updated_at = ${now} WHERE id = ${campaign.id} AND status = ${campaign.status}`,
    ...(deliveries.length > 0
      ? [insertDeliveries(deliveries, sql`EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaign.id} AND status = ${next} AND updated_at = ${now})`, now)]
      : []),
  ]);
  return deliveryIds(results[1]);
}
