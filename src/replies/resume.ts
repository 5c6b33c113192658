import { sql } from "drizzle-orm";
import { wakeCampaigns } from "../mailboxes/wake";
import type { Bindings } from "../platform/env";
import { rawBatch } from "../platform/sql";
import { notMoving } from "../platform/moving";

/** Records resumed per minute at most (the rest the next minute). */
const RESUME_LIMIT = 500;

/**
 * Minute job: records an out-of-office answer paused (campaign setting autoReactivateOOO) go on
 * once their return date or delay has come: PAUSED → INPROGRESS, and their campaigns' senders wake.
 * A record resumed or stopped by hand meanwhile only loses its stale resume time.
 */
export async function resumePausedRecords(env: Bindings, at: Date): Promise<number> {
  const now = at.getTime();
  const [rows] = await rawBatch(env.DB, [
    sql`UPDATE campaign_leads SET state = CASE WHEN state = 'PAUSED' THEN 'INPROGRESS' ELSE state END, resume_at = NULL, updated_at = ${now}
        WHERE id IN (SELECT id FROM campaign_leads WHERE resume_at <= ${now} AND ${notMoving(sql`account_id`)} ORDER BY resume_at LIMIT ${RESUME_LIMIT})
        RETURNING campaign_id`,
  ]);
  const campaignIds = [...new Set((rows ?? []).map((row) => Number(row.campaign_id)))];
  await wakeCampaigns(env, campaignIds);
  return rows?.length ?? 0;
}
