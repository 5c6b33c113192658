import { and, sql } from "drizzle-orm";
import { leadCategories } from "../db/schema";
import type { Database } from "../platform/db";
import { isUniqueViolation } from "../platform/db-errors";
import { rawBatch, statement } from "../platform/sql";

/** The SQL of custom lead categories (CONTRACT section 20.1). */

export type CategoryRow = typeof leadCategories.$inferSelect;

/** Custom ids start above this, so the built-in ones can grow (inferred). */
const FIRST_CUSTOM_ID = 1001;

/**
 * The table's id counter, which starts at the shard's range (src/directory/id-ranges.ts): a custom
 * category's id is above it, so it names its shard like every other id (the built-in ones, the same
 * on every shard, sit below every range).
 */
const SHARD_COUNTER = sql`(SELECT coalesce(max(seq), 0) FROM sqlite_sequence WHERE name = 'lead_categories')`;

export interface CategoryFields {
  name: string;
  nameFolded: string;
  sentimentType: "positive" | "negative" | null;
  colourCode: string;
}

/** A name (folded) already taken by a built-in category or one of the account's, other than `except`. */
const taken = (accountId: number, folded: string, except: number | null) =>
  sql`EXISTS (SELECT 1 FROM lead_categories WHERE (account_id IS NULL OR account_id = ${accountId})
    AND coalesce(name_folded, lower(name)) = ${folded} AND id IS NOT ${except})`;

/** The new category, or null when the name is taken. */
export async function insertCategory(d1: D1Database, accountId: number, fields: CategoryFields, now: number): Promise<CategoryRow | null> {
  try {
    const row = await statement(
      d1,
      sql`INSERT INTO lead_categories (id, account_id, name, name_folded, sentiment_type, colour_code, created_at, updated_at)
          SELECT max(${FIRST_CUSTOM_ID - 1}, (SELECT coalesce(max(id), 0) FROM lead_categories), ${SHARD_COUNTER}) + 1, ${accountId}, ${fields.name},
            ${fields.nameFolded}, ${fields.sentimentType}, ${fields.colourCode}, ${now}, ${now}
          WHERE NOT ${taken(accountId, fields.nameFolded, null)}
          RETURNING id`,
    ).first<{ id: number }>();
    return row ? await findCategory(d1, accountId, row.id) : null;
  } catch (error) {
    if (isUniqueViolation(error)) return null;
    throw error;
  }
}

/** A category the account can see (built-in or its own), or null. */
export async function findCategory(d1: D1Database, accountId: number, id: number): Promise<CategoryRow | null> {
  const row = await statement(
    d1,
    sql`SELECT id, account_id, name, sentiment_type, colour_code, name_folded, created_at, updated_at FROM lead_categories
        WHERE id = ${id} AND (account_id IS NULL OR account_id = ${accountId})`,
  ).first<Record<string, unknown>>();
  if (!row) return null;
  return {
    id: Number(row.id),
    accountId: row.account_id === null ? null : Number(row.account_id),
    name: String(row.name),
    sentimentType: (row.sentiment_type as CategoryRow["sentimentType"]) ?? null,
    colourCode: (row.colour_code as string | null) ?? null,
    nameFolded: (row.name_folded as string | null) ?? null,
    createdAt: new Date(Number(row.created_at)),
    updatedAt: row.updated_at === null ? null : new Date(Number(row.updated_at)),
  };
}

/** Changes the account's own category; false when the new name is taken. */
export async function updateCategory(
  d1: D1Database,
  accountId: number,
  id: number,
  change: Partial<CategoryFields>,
  now: number,
): Promise<boolean> {
  const sets = [
    change.name !== undefined ? sql`name = ${change.name}, name_folded = ${change.nameFolded!}` : null,
    change.sentimentType !== undefined ? sql`sentiment_type = ${change.sentimentType}` : null,
    change.colourCode !== undefined ? sql`colour_code = ${change.colourCode}` : null,
    sql`updated_at = ${now}`,
  ].filter((part) => part !== null);
  try {
    const row = await statement(
      d1,
      sql`UPDATE lead_categories SET ${sql.join(sets, sql`, `)} WHERE id = ${id} AND account_id = ${accountId}
          ${change.nameFolded === undefined ? sql`` : sql`AND NOT ${taken(accountId, change.nameFolded, id)}`} RETURNING id`,
    ).first<{ id: number }>();
    return row !== null;
  } catch (error) {
    if (isUniqueViolation(error)) return false;
    throw error;
  }
}

/**
 * Deletes the account's own category unless a campaign record is in it, and in the same batch
 * takes its id out of webhook category filters, prompt templates (their version moves on) and
 * campaigns' `ai_categorisation_options`. Past categorisations keep the id and name. False when a
 * record holds it.
 */
export async function deleteCategory(d1: D1Database, accountId: number, id: number, now: number): Promise<boolean> {
  const inUse = sql`EXISTS (SELECT 1 FROM campaign_leads WHERE campaign_id IN (SELECT id FROM campaigns WHERE account_id = ${accountId}) AND category_id = ${id})`;
  const gone = sql`NOT EXISTS (SELECT 1 FROM lead_categories WHERE id = ${id})`;
  const without = (column: string) => sql.raw(`(SELECT json_group_array(value) FROM json_each(${column}) WHERE value <> ${id})`);
  const results = await rawBatch(d1, [
    sql`DELETE FROM lead_categories WHERE id = ${id} AND account_id = ${accountId} AND NOT ${inUse} RETURNING id`,
    sql`UPDATE webhooks SET category_ids = ${without("category_ids")}, updated_at = ${now}
        WHERE account_id = ${accountId} AND ${gone} AND EXISTS (SELECT 1 FROM json_each(webhooks.category_ids) WHERE value = ${id})`,
    sql`UPDATE prompt_templates SET categories = ${without("categories")}, version = version + 1, updated_at = ${now}
        WHERE account_id = ${accountId} AND ${gone} AND EXISTS (SELECT 1 FROM json_each(prompt_templates.categories) WHERE value = ${id})`,
    sql`UPDATE campaigns SET settings = json_set(settings, '$.stored.ai_categorisation_options',
          (SELECT json_group_array(CASE WHEN type IN ('object', 'array') THEN json(value) ELSE value END)
             FROM json_each(settings, '$.stored.ai_categorisation_options')
             WHERE NOT ((type IN ('integer', 'text') AND CAST(value AS INTEGER) = ${id})
                     OR (type = 'object' AND CAST(json_extract(value, '$.id') AS INTEGER) = ${id})))),
          updated_at = ${now}
        WHERE account_id = ${accountId} AND ${gone} AND json_type(settings, '$.stored.ai_categorisation_options') = 'array'`,
  ]);
  return results[0]!.length > 0;
}

/** The ids among `ids` that are not categories the account can use. */
export async function unknownCategoryIds(db: Database, accountId: number, ids: number[]): Promise<number[]> {
  if (ids.length === 0) return [];
  const rows = await db
    .select({ id: leadCategories.id })
    .from(leadCategories)
    .where(and(sql`${leadCategories.id} IN (SELECT value FROM json_each(${JSON.stringify(ids)}))`, sql`(${leadCategories.accountId} IS NULL OR ${leadCategories.accountId} = ${accountId})`));
  const known = new Set(rows.map((row) => row.id));
  return ids.filter((id) => !known.has(id));
}
