import { and, asc, eq, ne, sql, type SQL } from "drizzle-orm";
import { campaigns } from "../db/schema";
import type { Database } from "../platform/db";
import { rawBatch } from "../platform/sql";

/**
 * Deletes a campaign unless it is ACTIVE, in one statement: its records, their events and messages,
 * sequences, campaign webhooks (and their deliveries), mailbox links, tags and spam tests go with it
 * through the schema's ON DELETE CASCADE; its subsequences stay, without a parent. False when
 * the campaign turned ACTIVE meanwhile (or is gone).
 */
export async function deleteCampaign(db: Database, campaignId: number): Promise<boolean> {
  const deleted = await db
    .delete(campaigns)
    .where(and(eq(campaigns.id, campaignId), ne(campaigns.status, "ACTIVE")))
    .returning({ id: campaigns.id })
    .get();
  return deleted !== undefined;
}

/** The campaign a batch inserted last: D1 runs a batch as one transaction with no writer between its statements. */
const NEWEST_CAMPAIGN = sql`(SELECT max(id) FROM campaigns)`;

/** Statements that copy a campaign's live sequence (new ids), mailbox links and tags onto the newest campaign. */
function copyContents(sourceId: number, accountId: number, clientId: number | null, now: number): SQL[] {
  return [
    sql`INSERT INTO sequence_steps (campaign_id, seq_number, delay_in_days, subject, email_body, variant_distribution_type,
                                    lead_distribution_percentage, winning_metric_property, created_at, updated_at)
        SELECT ${NEWEST_CAMPAIGN}, seq_number, delay_in_days, subject, email_body, variant_distribution_type,
               lead_distribution_percentage, winning_metric_property, ${now}, ${now}
        FROM sequence_steps WHERE campaign_id = ${sourceId} AND deleted_at IS NULL ORDER BY seq_number`,
    sql`INSERT INTO sequence_variants (step_id, label, subject, email_body, percentage, position, created_at, updated_at)
        SELECT copy.id, v.label, v.subject, v.email_body, v.percentage, v.position, ${now}, ${now}
        FROM sequence_variants v
        JOIN sequence_steps original ON original.id = v.step_id
        JOIN sequence_steps copy ON copy.campaign_id = ${NEWEST_CAMPAIGN} AND copy.seq_number = original.seq_number
        WHERE original.campaign_id = ${sourceId} AND original.deleted_at IS NULL AND v.deleted_at IS NULL
        ORDER BY v.id`,
    sql`INSERT INTO campaign_email_accounts (campaign_id, email_account_id, created_at)
        SELECT ${NEWEST_CAMPAIGN}, email_account_id, ${now} FROM campaign_email_accounts WHERE campaign_id = ${sourceId}`,
    // Tags are scoped by client: the copy takes tags of its own scope by name, as replaceCampaignTags does.
    sql`INSERT INTO tags (account_id, client_id, name, color)
        SELECT ${accountId}, ${clientId}, t.name, t.color FROM campaign_tags ct JOIN tags t ON t.id = ct.tag_id
        WHERE ct.campaign_id = ${sourceId}
        ON CONFLICT DO NOTHING`,
    sql`INSERT INTO campaign_tags (campaign_id, tag_id)
        SELECT ${NEWEST_CAMPAIGN}, scoped.id FROM campaign_tags ct
        JOIN tags t ON t.id = ct.tag_id
        JOIN tags scoped ON scoped.account_id = ${accountId} AND coalesce(scoped.client_id, 0) = ${clientId ?? 0} AND scoped.name = t.name
        WHERE ct.campaign_id = ${sourceId}`,
  ];
}

function insertCopy(sourceId: number, clientId: number | null, name: SQL, parent: SQL, now: number): SQL {
  return sql`INSERT INTO campaigns (account_id, client_id, name, status, schedule, settings, parent_campaign_id, team_member_id, created_at, updated_at)
             SELECT account_id, ${clientId}, ${name}, 'DRAFTED', schedule, settings, ${parent}, team_member_id, ${now}, ${now}
             FROM campaigns WHERE id = ${sourceId}
             RETURNING id`;
}

interface DuplicateRequest {
  source: { id: number; accountId: number; name: string };
  clientId: number | null;
  subsequenceIds: number[];
}

/**
 * Copies a campaign (and, when asked, its subsequences) in one batch: DRAFTED, no leads, no webhooks,
 * same schedule, settings, sequence, mailboxes and tags. Answers the copy's id.
 */
export async function duplicateCampaign(d1: D1Database, request: DuplicateRequest, now: number): Promise<number> {
  const { source, clientId } = request;
  const statements: SQL[] = [
    insertCopy(source.id, clientId, sql`${`${source.name} (copy)`}`, sql`parent_campaign_id`, now),
    ...copyContents(source.id, source.accountId, clientId, now),
  ];
  request.subsequenceIds.forEach((childId, index) => {
    // The first child follows the copy itself; later ones follow a sibling, whose parent is the copy.
    const parent = index === 0 ? NEWEST_CAMPAIGN : sql`(SELECT parent_campaign_id FROM campaigns WHERE id = ${NEWEST_CAMPAIGN})`;
    statements.push(insertCopy(childId, clientId, sql`name`, parent, now), ...copyContents(childId, source.accountId, clientId, now));
  });
  const results = await rawBatch(d1, statements);
  return Number(results[0]![0]!.id);
}

/** A campaign's subsequences, oldest first. */
export async function subsequenceIdsOf(db: Database, campaignId: number): Promise<number[]> {
  const rows = await db.select({ id: campaigns.id }).from(campaigns).where(eq(campaigns.parentCampaignId, campaignId)).orderBy(asc(campaigns.id));
  return rows.map((row) => row.id);
}

export async function setTeamMember(db: Database, campaignId: number, teamMemberId: number | null): Promise<void> {
  await db.update(campaigns).set({ teamMemberId, updatedAt: new Date() }).where(eq(campaigns.id, campaignId));
}

interface NewSubsequence {
  accountId: number;
  clientId: number | null;
  parentCampaignId: number;
  name: string;
  /** What the callers send about when leads should enter it: stored, not acted on (contract section 11). */
  conditions: Record<string, unknown>;
}

export function insertSubsequence(db: Database, values: NewSubsequence) {
  const now = new Date();
  return db
    .insert(campaigns)
    .values({
      accountId: values.accountId,
      clientId: values.clientId,
      name: values.name,
      parentCampaignId: values.parentCampaignId,
      settings: { stored: { subsequence: values.conditions } },
      createdAt: now,
      updatedAt: now,
    })
    .returning()
    .get();
}
