import { and, asc, eq, exists, not, notExists, sql } from "drizzle-orm";
import { alias } from "drizzle-orm/sqlite-core";
import { campaignFolders, campaigns } from "../db/schema";
import { folderHolds, visibleCampaigns, visibleRows, type Scope } from "../platform/access";
import type { Database } from "../platform/db";
import type { CampaignSettings } from "../schedule/settings";
import { inList, jsonList, jsonSet } from "../platform/sql";

/** Of these campaign ids, the ones the caller may see. */
export async function visibleCampaignIds(db: Database, principal: Scope, ids: number[]): Promise<Set<number>> {
  const rows = await db
    .select({ id: campaigns.id })
    .from(campaigns)
    .where(and(visibleCampaigns(principal), sql`${campaigns.id} ${inList(ids)}`));
  return new Set(rows.map((row) => row.id));
}

/** Puts every tag on every campaign; answers how many pairs were new. */
export async function addTagsToCampaigns(db: Database, campaignIds: number[], tagIds: number[]): Promise<number> {
  const inserted = await db.all(
    sql`INSERT INTO campaign_tags (campaign_id, tag_id)
        SELECT c.value, t.value FROM json_each(${jsonList(campaignIds)}) c, json_each(${jsonList(tagIds)}) t WHERE true
        ON CONFLICT DO NOTHING
        RETURNING campaign_id`,
  );
  return inserted.length;
}

/** Takes every tag off every campaign; answers how many pairs there were. */
export async function removeTagsFromCampaigns(db: Database, campaignIds: number[], tagIds: number[]): Promise<number> {
  const deleted = await db.all(
    sql`DELETE FROM campaign_tags WHERE campaign_id ${inList(campaignIds)} AND tag_id ${inList(tagIds)} RETURNING campaign_id`,
  );
  return deleted.length;
}

// Folders.

export type FolderRow = typeof campaignFolders.$inferSelect;

export function insertFolder(db: Database, values: { accountId: number; clientId: number | null; name: string }): Promise<FolderRow> {
  return db.insert(campaignFolders).values(values).returning().get();
}

/** A folder the caller may see, or undefined. */
export function findFolder(db: Database, principal: Scope, id: number): Promise<FolderRow | undefined> {
  return db
    .select()
    .from(campaignFolders)
    .where(and(eq(campaignFolders.id, id), visibleRows(principal, campaignFolders)))
    .get();
}

/** The caller's folders by id, each with how many of its campaigns the caller sees. */
export function foldersOf(db: Database, principal: Scope) {
  return db
    .select({
      id: campaignFolders.id,
      name: campaignFolders.name,
      createdAt: campaignFolders.createdAt,
      // Written out: drizzle leaves a one-table select's columns unqualified, and "id" in the subquery would be the campaign's.
      campaignCount: sql<number>`(SELECT count(*) FROM campaigns c WHERE c.folder_id = campaign_folders.id AND c.account_id = ${principal.accountId}
                                   ${principal.clientId === null ? sql`` : sql`AND c.client_id = ${principal.clientId}`})`,
    })
    .from(campaignFolders)
    .where(visibleRows(principal, campaignFolders))
    .orderBy(asc(campaignFolders.id));
}

/** Deletes a folder (its campaigns become unfiled through ON DELETE SET NULL). */
export async function deleteFolder(db: Database, id: number): Promise<void> {
  await db.delete(campaignFolders).where(eq(campaignFolders.id, id));
}

/** What a filing did: the campaigns filed; or nothing, the folder gone, or some campaigns of another client than the folder's. */
export type Filing = { filed: number[] } | { folderGone: true } | { ofAnotherClient: number[] };

/**
 * Files these campaigns in a folder, or none, all or nothing. The write itself asks for the folder and
 * the campaigns: a delete after the caller's check would otherwise fail the write on the foreign key (a
 * 500) instead of the contract's 404, and a campaign given to another client meanwhile is no longer the
 * caller's to file, nor (`folderHolds`) one this folder may hold.
 */
export async function fileCampaigns(db: Database, principal: Scope, campaignIds: number[], folderId: number | null, now: number): Promise<Filing> {
  const other = alias(campaigns, "other");
  const asked = (table: typeof campaigns | typeof other) => and(sql`${table.id} ${inList(campaignIds)}`, visibleRows(principal, table));
  if (folderId === null) {
    const rows = await db.update(campaigns).set({ folderId: null, updatedAt: new Date(now) }).where(asked(campaigns)).returning({ id: campaigns.id });
    return { filed: rows.map((row) => row.id).sort((a, b) => a - b) };
  }
  const folder = and(eq(campaignFolders.id, folderId), visibleRows(principal, campaignFolders));
  const ofAnotherClient = db
    .select({ id: other.id })
    .from(other)
    .innerJoin(campaignFolders, folder)
    .where(and(asked(other), not(folderHolds(sql`${campaignFolders.clientId}`, sql`${other.clientId}`))));
  const [rows, found, refused] = await db.batch([
    db
      .update(campaigns)
      .set({ folderId, updatedAt: new Date(now) })
      .where(and(asked(campaigns), exists(db.select({ one: sql`1` }).from(campaignFolders).where(folder)), notExists(ofAnotherClient)))
      .returning({ id: campaigns.id }),
    db.select({ id: campaignFolders.id }).from(campaignFolders).where(folder),
    ofAnotherClient,
  ]);
  if (found.length === 0) return { folderGone: true };
  if (refused.length > 0) return { ofAnotherClient: refused.map((row) => row.id).sort((a, b) => a - b) };
  return { filed: rows.map((row) => row.id).sort((a, b) => a - b) };
}

/**
 * Sets a DRAFTED campaign's spintax mode, and only it, over the settings stored when the statement
 * runs (a settings post at the same time keeps its fields); false when it is no longer DRAFTED (a
 * start got there first).
 */
export async function saveDraftSpintaxMode(db: Database, campaignId: number, mode: CampaignSettings["spintaxDistributionMode"]): Promise<boolean> {
  const updated = await db
    .update(campaigns)
    .set({ settings: jsonSet(sql`settings`, "{}", [["$.spintaxDistributionMode", mode]]), updatedAt: new Date() })
    .where(and(eq(campaigns.id, campaignId), eq(campaigns.status, "DRAFTED")))
    .returning({ id: campaigns.id })
    .get();
  return updated !== undefined;
}
