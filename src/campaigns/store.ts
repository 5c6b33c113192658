import { and, asc, eq, sql, type SQL } from "drizzle-orm";
import { campaignTags, campaigns, tags, type CampaignStatus } from "../db/schema";
import { visibleCampaigns, CAMPAIGN_NOT_FOUND } from "../platform/access";
import { campaignMoved } from "../clients/store";
import type { Principal } from "../platform/principal";
import type { Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import type { Schedule } from "../schedule/window";
import { definedPaths, FIRST_SCHEDULE, settingsPaths, type SettingsChange } from "../schedule/settings";
import { inList, jsonList, jsonSet, rawBatch } from "../platform/sql";
import { deliveryIds, insertDeliveries, type NewDelivery } from "../webhooks/outbox";
import { activeWebhooks } from "../webhooks/store";
import { afterCursor, pageWindow, type Page } from "../platform/paging";

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

export function insertCampaign(db: Database, values: { accountId: number; clientId: number | null; name: string }) {
  const now = new Date();
  return db
    .insert(campaigns)
    .values({ ...values, createdAt: now, updatedAt: now })
    .returning()
    .get();
}

/** The campaigns the caller may see, optionally one client's or one folder's, oldest first, one page. */
export function campaignsVisibleTo(db: Database, principal: Principal, only: { clientId?: number; folderId?: number }, page: Page = {}) {
  const { clientId, folderId } = only;
  const { limit, offset } = pageWindow(page);
  return db
    .select()
    .from(campaigns)
    .where(and(visibleCampaigns(principal), clientId === undefined ? undefined : eq(campaigns.clientId, clientId),
        folderId === undefined ? undefined : eq(campaigns.folderId, folderId),
        afterCursor(campaigns.id, page)))
    .orderBy(asc(campaigns.id))
    .limit(limit)
    .offset(offset);
}

/** A campaign tag; `tag_id`, `tag_name` and `tag_color` repeat it for the vendor CLI's TagSchema (section 11, C11). */
export type CampaignTag = { id: number; name: string; tag_id: number; tag_name: string; tag_color: string };

/** Each campaign's tags, by name. */
export async function tagsOf(db: Database, campaignIds: number[]): Promise<Map<number, CampaignTag[]>> {
  const byCampaign = new Map<number, CampaignTag[]>(campaignIds.map((id) => [id, []]));
  if (campaignIds.length === 0) return byCampaign;
  const rows = await db
    .select({ campaignId: campaignTags.campaignId, id: tags.id, name: tags.name, color: tags.color })
    .from(campaignTags)
    .innerJoin(tags, eq(tags.id, campaignTags.tagId))
    .where(sql`${campaignTags.campaignId} ${inList(campaignIds)}`)
    .orderBy(asc(tags.name));
  for (const row of rows) {
    byCampaign.get(row.campaignId)?.push({ id: row.id, name: row.name, tag_id: row.id, tag_name: row.name, tag_color: row.color });
  }
  return byCampaign;
}

/** The campaign whose tags are set: its tags take the campaign's client scope. */
interface TagTarget {
  accountId: number;
  campaignId: number;
  clientId: number | null;
}

/**
 * Replaces a campaign's tags with these names, creating the ones its scope lacks. Tags of other
 * scopes (another client's, or the account's own for a client campaign) are never reused.
 */
export async function replaceCampaignTags(d1: D1Database, target: TagTarget, names: string[]): Promise<void> {
  const namesJson = jsonList(names);
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

/**
 * Sets the given schedule fields (over FIRST_SCHEDULE's defaults when there is none) in one statement,
 * if the result has a zone and an end after its start: the rules the route checked over the schedule
 * it read, held again over the one stored when the statement runs, since a concurrent post may have
 * moved the hour this one kept. `redating` (src/schedule/redating-store.ts: its records re-dated by the
 * new hours, guarded on this write at `now`) goes in the same batch. Answers the schedule stored after
 * it, and whether this change is in it; undefined when the campaign is gone.
 */
export async function saveSchedule(
  d1: D1Database,
  campaignId: number,
  change: Partial<Schedule>,
  now: number,
  redating: SQL[],
): Promise<{ applied: true; schedule: Schedule } | { applied: false; schedule: Schedule | null } | undefined> {
  const next = jsonSet(sql`schedule`, JSON.stringify(FIRST_SCHEDULE), definedPaths(change));
  const [applied, ...rest] = await rawBatch(d1, [
    // 'HH:MM' (zero-padded, 24 h, as the schema accepts it) orders as text as it does as time.
    sql`UPDATE campaigns SET schedule = next.value, updated_at = ${now}
        FROM (SELECT ${next} AS value FROM campaigns WHERE id = ${campaignId}) AS next
        WHERE campaigns.id = ${campaignId} AND next.value ->> '$.timezone' IS NOT NULL
          AND next.value ->> '$.end_hour' > next.value ->> '$.start_hour'
        RETURNING campaigns.id`,
    ...redating,
    sql`SELECT schedule FROM campaigns WHERE id = ${campaignId}`,
  ]);
  const row = rest.at(-1)![0];
  if (!row) return undefined;
  const schedule = row.schedule === null ? null : (JSON.parse(row.schedule as string) as Schedule);
  return applied!.length > 0 ? { applied: true, schedule: schedule! } : { applied: false, schedule };
}

/**
 * Sets the given settings (and name) in one statement, over the settings stored when it runs; a new
 * client is assign-client's move (`campaignMoved`: subsequences, tags, spam tests, folders), in the same batch.
 */
export async function saveSettings(
  db: Database,
  campaign: { id: number; accountId: number },
  change: { settings: SettingsChange; name?: string; clientId?: number | null },
  now: number,
): Promise<void> {
  await rawBatch(db.$client, [
    db
      .update(campaigns)
      .set({
        settings: jsonSet(sql`settings`, "{}", settingsPaths(change.settings)),
        ...(change.name !== undefined && { name: change.name }),
        updatedAt: new Date(now),
      })
      .where(eq(campaigns.id, campaign.id)),
    ...(change.clientId === undefined ? [] : campaignMoved(db, campaign, change.clientId, false, now)),
  ]);
}
