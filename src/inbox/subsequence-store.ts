import { sql } from "drizzle-orm";
import { rawBatch, statement } from "../platform/sql";

interface PushToSubsequence {
  recordId: number;
  accountId: number;
  leadId: number;
  subSequenceId: number;
  mailboxId: number | null;
  startAt: number;
  stopOnParentReply: boolean;
  now: number;
}

/** Whether a mailbox sends for a campaign (a pushed record keeps its mailbox only if so). */
export async function isAttached(d1: D1Database, campaignId: number, mailboxId: number): Promise<boolean> {
  const row = await statement(
    d1,
    sql`SELECT 1 AS hit FROM campaign_email_accounts WHERE campaign_id = ${campaignId} AND email_account_id = ${mailboxId}`,
  ).first<{ hit: number }>();
  return row !== null;
}

/**
 * One batch: the parent record stops sending (COMPLETED, pushed) unless another push got there
 * first, and only then the subsequence gains the lead, due from `startAt`. Answers the new
 * record's id, or null when the record was already pushed (or the lead is already there).
 */
export async function pushToSubsequence(d1: D1Database, push: PushToSubsequence): Promise<number | null> {
  const [, inserted] = await rawBatch(d1, [
    sql`UPDATE campaign_leads SET state = CASE WHEN state IN ('DRAFTED', 'STARTED', 'INPROGRESS', 'PAUSED') THEN 'COMPLETED' ELSE state END,
               sub_sequence_id = ${push.subSequenceId}, due_at = NULL, resume_at = NULL, updated_at = ${push.now}
        WHERE id = ${push.recordId} AND sub_sequence_id IS NULL
          AND NOT EXISTS (SELECT 1 FROM campaign_leads WHERE campaign_id = ${push.subSequenceId} AND lead_id = ${push.leadId})`,
    sql`INSERT INTO campaign_leads (account_id, campaign_id, lead_id, email_account_id, next_step, due_at, parent_record_id, stop_on_parent_reply, created_at, updated_at)
        SELECT ${push.accountId}, ${push.subSequenceId}, ${push.leadId}, ${push.mailboxId}, 1, ${push.startAt}, ${push.recordId}, ${push.stopOnParentReply ? 1 : 0}, ${push.now}, ${push.now}
        WHERE changes() = 1
        ON CONFLICT (campaign_id, lead_id) DO NOTHING
        RETURNING id`,
  ]);
  const id = inserted?.[0]?.id;
  return id === undefined ? null : Number(id);
}
