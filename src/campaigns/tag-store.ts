import { sql } from "drizzle-orm";
import { rawBatch } from "../platform/sql";

/** The campaign whose tags are set: its tags take the campaign's client scope. */
export interface TagTarget {
  accountId: number;
  campaignId: number;
  clientId: number | null;
}

/**
 * Replaces a campaign's tags with these names, creating the ones its scope lacks. Tags of other
 * scopes (another client's, or the account's own for a client campaign) are never reused.
 */
export async function replaceCampaignTags(d1: D1Database, target: TagTarget, names: string[]): Promise<void> {
  const namesJson = JSON.stringify(names);
  await rawBatch(d1, [
    sql`INSERT INTO tags (account_id, client_id, name)
        SELECT ${target.accountId}, ${target.clientId}, value FROM json_each(${namesJson}) WHERE true
        ON CONFLICT DO NOTHING`,
    sql`DELETE FROM campaign_tags WHERE campaign_id = ${target.campaignId}`,
    sql`INSERT INTO campaign_tags (campaign_id, tag_id)
        SELECT ${target.campaignId}, id FROM tags
        WHERE account_id = ${target.accountId} AND coalesce(client_id, 0) = ${target.clientId ?? 0}
          AND name IN (SELECT value FROM json_each(${namesJson}))`,
  ]);
}
