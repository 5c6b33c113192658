import { and, desc, eq, sql } from "drizzle-orm";
import { promptTemplates } from "../db/schema";
import type { Database } from "../platform/db";
import { rawBatch } from "../platform/sql";

/** The SQL of campaign prompt templates (CONTRACT section 20.2). */

export type TemplateRow = typeof promptTemplates.$inferSelect;

export function newestTemplate(db: Database, campaignId: number): Promise<TemplateRow | undefined> {
  return db.select().from(promptTemplates).where(eq(promptTemplates.campaignId, campaignId)).orderBy(desc(promptTemplates.id)).get();
}

export function findTemplate(db: Database, campaignId: number, id: number): Promise<TemplateRow | undefined> {
  return db
    .select()
    .from(promptTemplates)
    .where(and(eq(promptTemplates.id, id), eq(promptTemplates.campaignId, campaignId)))
    .get();
}

/** A new active template; the campaign's earlier ones turn inactive in the same batch. */
export async function insertTemplate(
  d1: D1Database,
  template: { accountId: number; campaignId: number; promptContent: string; categories: number[] },
  now: number,
): Promise<number> {
  const [, inserted] = await rawBatch(d1, [
    sql`UPDATE prompt_templates SET is_active = 0, updated_at = ${now} WHERE campaign_id = ${template.campaignId} AND is_active = 1`,
    sql`INSERT INTO prompt_templates (account_id, campaign_id, prompt_content, categories, is_active, version, created_at, updated_at)
        VALUES (${template.accountId}, ${template.campaignId}, ${template.promptContent}, ${JSON.stringify(template.categories)}, 1, 1, ${now}, ${now})
        RETURNING id`,
  ]);
  return Number(inserted![0]!.id);
}

/**
 * Changes a template: its version moves on when the prompt or the categories change, and one made
 * active turns the campaign's others inactive (one active template per campaign).
 */
export async function updateTemplate(
  d1: D1Database,
  current: TemplateRow,
  change: { promptContent?: string; categories?: number[]; isActive?: boolean },
  now: number,
): Promise<void> {
  const promptContent = change.promptContent ?? current.promptContent;
  const categories = change.categories ?? current.categories;
  const changed = promptContent !== current.promptContent || JSON.stringify(categories) !== JSON.stringify(current.categories);
  const isActive = change.isActive ?? current.isActive;
  await rawBatch(d1, [
    ...(change.isActive === true
      ? [sql`UPDATE prompt_templates SET is_active = 0, updated_at = ${now} WHERE campaign_id = ${current.campaignId} AND id <> ${current.id} AND is_active = 1`]
      : []),
    sql`UPDATE prompt_templates SET prompt_content = ${promptContent}, categories = ${JSON.stringify(categories)}, is_active = ${isActive ? 1 : 0},
          version = version + ${changed ? 1 : 0}, updated_at = ${now}
        WHERE id = ${current.id}`,
  ]);
}
