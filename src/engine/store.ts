import { and, asc, eq, inArray, isNull, sql, type SQL } from "drizzle-orm";
import { campaignEmailAccounts, campaignLeads, campaigns, emailAccounts, messages, sequenceSteps, sequenceVariants, type MessageStatus } from "../db/schema";
import type { Database } from "../platform/db";
import type { TemplateLead } from "../sequences/template";
import { blockListed } from "../leads/block-list";
import { optedOut } from "../leads/opt-out";
import { inList, jsonList, rawBatch, statement } from "../platform/sql";
import { mailboxSends } from "../mailboxes/sends";
import type { RecordOutcome } from "./outcome";
import { espMatchingSql } from "../esp/store";
import { espMatchingOn, settingsOf } from "../schedule/settings";
import { MATCH_RECHECK_MS, matchedOpenRecords } from "./matching";

/**
 * The engine's SQL. A pass of one mailbox's sender reads its work (one batch), claims due records
 * of one campaign (one batch: lease, message rows, what to send), and stores the outcome of what it
 * sent (one batch, with the events through the ingestion statements). Records are found through
 * `campaign_leads_due_idx` (campaign, pinned mailbox or NULL, due time), so no pass scans.
 */

/** Record states the engine still sends to; the others are final or held by hand (PAUSED). */
const LIVE_STATES = ["DRAFTED", "STARTED", "INPROGRESS"] as const;
const live = sql.raw(`(${LIVE_STATES.map((s) => `'${s}'`).join(", ")})`);

/** How long a claimed record stays out of other passes' reach while its pass sends. */
const LEASE_MS = 15 * 60_000;

export type MailboxRow = typeof emailAccounts.$inferSelect;
export type CampaignRow = Pick<typeof campaigns.$inferSelect, "id" | "accountId" | "clientId" | "name" | "status" | "schedule" | "settings">;

interface MailboxWork {
  mailbox: MailboxRow | undefined;
  campaigns: CampaignRow[];
  sentToday: number;
  lastSentAt: number | null;
}

/** The mailbox, its ACTIVE campaigns, its sends of this UTC day and its last send (src/mailboxes/sends.ts): a batch's statements. */
function workQueries(db: Database, mailboxId: number, dayStart: number) {
  const sends = mailboxSends(sql`${mailboxId}`, sql`(SELECT account_id FROM email_accounts WHERE id = ${mailboxId})`, dayStart);
  return [
    db.select().from(emailAccounts).where(eq(emailAccounts.id, mailboxId)),
    db
      .select({
        id: campaigns.id,
        accountId: campaigns.accountId,
        clientId: campaigns.clientId,
        name: campaigns.name,
        status: campaigns.status,
        schedule: campaigns.schedule,
        settings: campaigns.settings,
      })
      .from(campaignEmailAccounts)
      .innerJoin(campaigns, eq(campaigns.id, campaignEmailAccounts.campaignId))
      .where(and(eq(campaignEmailAccounts.emailAccountId, mailboxId), eq(campaigns.status, "ACTIVE")))
      .orderBy(asc(campaigns.id)),
    db.select({ sentToday: sends.capToday, lastSentAt: sends.lastSentAt }).from(sql`(SELECT 1)`),
  ] as const;
}

function workOf([mailboxRows, campaignRows, counts]: readonly [MailboxRow[], CampaignRow[], { sentToday: number; lastSentAt: number | null }[]]): MailboxWork {
  return {
    mailbox: mailboxRows[0],
    campaigns: campaignRows,
    sentToday: counts[0]?.sentToday ?? 0,
    lastSentAt: counts[0]?.lastSentAt ?? null,
  };
}

export async function loadMailboxWork(db: Database, mailboxId: number, dayStart: number): Promise<MailboxWork> {
  return workOf(await db.batch(workQueries(db, mailboxId, dayStart)));
}

type StepRow = typeof sequenceSteps.$inferSelect;
type VariantRow = typeof sequenceVariants.$inferSelect;

export interface CampaignPlan {
  steps: Map<number, { step: StepRow; variants: VariantRow[] }>;
  /** The earliest due time among the records this mailbox may send (its own and unpinned ones). */
  nextDueAt: number | null;
  /** Step-1 messages of the campaign since the start of its local day (in-flight ones included). */
  firstStepsToday: number;
}

/**
 * Per campaign: live steps and variants, the next due time for this mailbox, the day's new leads.
 * With ESP matching on, the unpinned records counted are those this mailbox may take
 * (src/engine/matching.ts); due first sends it leaves to another provider's mailboxes with room
 * bring it back `MATCH_RECHECK_MS` from `now` at the latest, in case those run out of room.
 */
export async function loadCampaignPlans(
  db: Database,
  mailboxId: number,
  campaignIds: number[],
  localDayStarts: Map<number, number>,
  now: number,
): Promise<Map<number, CampaignPlan>> {
  const plans = new Map<number, CampaignPlan>();
  if (campaignIds.length === 0) return plans;
  const [steps, variants, ...perCampaign] = await db.batch([
    db
      .select()
      .from(sequenceSteps)
      .where(and(inArray(sequenceSteps.campaignId, sql`(SELECT value FROM json_each(${jsonList(campaignIds)}))`), isNull(sequenceSteps.deletedAt))),
    db
      .select()
      .from(sequenceVariants)
      .innerJoin(sequenceSteps, eq(sequenceSteps.id, sequenceVariants.stepId))
      .where(
        and(
          sql`${sequenceSteps.campaignId} ${inList(campaignIds)}`,
          isNull(sequenceSteps.deletedAt),
          isNull(sequenceVariants.deletedAt),
        ),
      )
      .orderBy(asc(sequenceVariants.position)),
    ...campaignIds.map((id) => {
      const matching = espMatchingSql(sql`(SELECT settings FROM campaigns WHERE id = ${id})`);
      const open = { campaignId: id, mailboxId, now, where: sql`due_at IS NOT NULL`, limit: sql`1` };
      return db
        .select({
          pinnedDue: sql<number | null>`(SELECT min(due_at) FROM campaign_leads WHERE campaign_id = ${id} AND email_account_id = ${mailboxId} AND due_at IS NOT NULL)`,
          openDue: sql<number | null>`CASE WHEN ${matching} THEN (SELECT min(due_at) FROM (${matchedOpenRecords(open, "allowed")}))
            ELSE (SELECT min(due_at) FROM campaign_leads WHERE campaign_id = ${id} AND email_account_id IS NULL AND due_at IS NOT NULL) END`,
          elsewhereDue: sql<number | null>`CASE WHEN ${matching} THEN (SELECT min(due_at) FROM (${matchedOpenRecords(open, "elsewhere")})) END`,
          firstSteps: sql<number>`(SELECT count(*) FROM messages WHERE campaign_id = ${id} AND step = 1 AND created_at >= ${localDayStarts.get(id) ?? 0})`,
        })
        .from(sql`(SELECT 1)`);
    }),
  ]);
  for (const [index, id] of campaignIds.entries()) {
    const row = (perCampaign[index] as { pinnedDue: number | null; openDue: number | null; elsewhereDue: number | null; firstSteps: number }[])[0]!;
    const recheck = row.elsewhereDue === null ? null : Math.max(row.elsewhereDue, now + MATCH_RECHECK_MS);
    const dues = [row.pinnedDue, row.openDue, recheck].filter((v): v is number => v !== null);
    plans.set(id, { steps: new Map(), nextDueAt: dues.length > 0 ? Math.min(...dues) : null, firstStepsToday: row.firstSteps });
  }
  for (const step of steps) plans.get(step.campaignId)!.steps.set(step.seqNumber, { step, variants: [] });
  for (const { sequence_variants: variant, sequence_steps: step } of variants) {
    plans.get(step.campaignId)!.steps.get(step.seqNumber)?.variants.push(variant);
  }
  return plans;
}

/** A claimed record as the pass sends it: the lead, the step, its message row if any and the thread so far. */
export interface ClaimedRecord {
  recordId: number;
  step: number;
  leadEmail: string;
  lead: TemplateLead;
  /** The step's message row, when one exists (a deferred attempt, or one already sent or in doubt). */
  messageRowId: number | null;
  messageStatus: MessageStatus | null;
  /** The row's Message-ID, or a fresh one for a message not yet written. */
  messageId: string;
  /** Attempts made so far (0 for a message not yet written). */
  attempts: number;
  /** Earlier messages of the thread, oldest first. */
  thread: { messageId: string; subject: string | null }[];
  /** Not to be sent: block-listed, opted out, or its address verified invalid (CONTRACT 22). */
  refusal: "blocked" | "opted_out" | "invalid_email" | null;
  /** The record's k in its campaign (incremental spintax, CONTRACT 21.1). */
  spintaxIndex: number | null;
  /** The lead's own IANA zone (CONTRACT 23.2), null when it has none. */
  leadTimezone: string | null;
  /** Pinned to this mailbox before the claim (a follow-up, a re-pin, a subsequence's record), not taken from rotation by it. */
  pinned: boolean;
}

export interface ClaimRequest {
  campaign: CampaignRow;
  mailboxId: number;
  senderDomain: string;
  now: number;
  /** At most this many records. */
  limit: number;
  /** Step-1 sends the campaign may still start today (its new-leads cap, minus today's). */
  newLeadsLeft: number;
}

/** A record is due now: live, with a step left, its time come (what a claim takes, its campaign ACTIVE, and `moreDue` asks about). */
function dueNow(now: number): SQL {
  return sql`due_at <= ${now} AND state IN ${live} AND next_step IS NOT NULL`;
}

/**
 * Whether a claim of this campaign by this mailbox would find a record due now: one pinned to it, or
 * (with `newLeads`: the campaign may still start some today) one no mailbox holds. Asked near a
 * session's end, to open the next session only for messages that will come; another mailbox may
 * claim the record first, which costs one unused login.
 */
export async function moreDue(d1: D1Database, request: { campaignId: number; mailboxId: number; now: number; newLeads: boolean }): Promise<boolean> {
  const { campaignId, mailboxId, now, newLeads } = request;
  const holder = newLeads ? sql`(email_account_id = ${mailboxId} OR email_account_id IS NULL)` : sql`email_account_id = ${mailboxId}`;
  const [rows] = await rawBatch(d1, [
    sql`SELECT EXISTS (SELECT 1 FROM campaign_leads WHERE campaign_id = ${campaignId} AND ${holder} AND ${dueNow(now)}) AS more`,
  ]);
  return Number(rows?.[0]?.more) === 1;
}

/**
 * Claims up to `limit` due records of one campaign for this mailbox, follow-ups first (pinned to
 * it), then new leads (unpinned, pinned now) within the new-leads cap, and reads what the pass
 * needs, in the records' order (their leads' enrollment); one batch. The claim is a lease (`claim_token`, `due_at` at the lease's end): a concurrent
 * pass of another mailbox cannot take the same record (one UPDATE on rows still unclaimed), and a
 * campaign paused or stopped since the pass began yields nothing. It writes NO message row: they are
 * written `sending` by `openStatement` a window at a time, and the sender's journal (journal.ts) says
 * which one a pass that dies left in doubt. A row still `sending` here (its pass died and its
 * lease ran out before `startPass` saw it) becomes `unconfirmed`, never sent again.
 */
export async function claimRecords(d1: D1Database, request: ClaimRequest): Promise<{ nonce: string; records: ClaimedRecord[] }> {
  const { campaign, mailboxId, now, limit } = request;
  const nonce = crypto.randomUUID();
  const lease = now + LEASE_MS;
  const claimable = sql`${dueNow(now)} AND EXISTS (SELECT 1 FROM campaigns WHERE id = ${campaign.id} AND status = 'ACTIVE')`;
  const due = (pinned: SQL) => sql`SELECT id FROM campaign_leads WHERE campaign_id = ${campaign.id} AND ${pinned} AND ${claimable} ORDER BY due_at`;
  const claim = (ids: SQL, fromRotation: boolean) =>
    sql`UPDATE campaign_leads SET email_account_id = ${mailboxId}, due_at = ${lease}, claim_token = ${nonce}, claim_from_rotation = ${fromRotation ? 1 : 0}, updated_at = ${now}
        WHERE id IN (${ids}) RETURNING id`;
  const claimed = sql`SELECT id FROM campaign_leads WHERE claim_token = ${nonce}`;
  const openLimit = sql`max(0, min(${request.newLeadsLeft}, ${limit} - (SELECT count(*) FROM campaign_leads WHERE claim_token = ${nonce})))`;
  // ESP matching (src/engine/matching.ts): new leads of this mailbox's provider, or of none with room.
  const open = espMatchingOn(settingsOf(campaign.settings))
    ? sql`SELECT id FROM (${matchedOpenRecords({ campaignId: campaign.id, mailboxId, now, where: claimable, limit: openLimit }, "allowed")})
          ORDER BY due_at LIMIT ${openLimit}`
    : sql`${due(sql`email_account_id IS NULL`)} LIMIT ${openLimit}`;
  const refusal = sql`CASE
      WHEN ${blockListed(campaign.accountId, campaign.clientId, sql`l.email`)} THEN 'blocked'
      WHEN ${optedOut(sql`cl.lead_id`)} THEN 'opted_out'
      WHEN l.verification_status = 'invalid' THEN 'invalid_email'
    END`;
  const results = await rawBatch(d1, [
    claim(sql`${due(sql`email_account_id = ${mailboxId}`)} LIMIT ${limit}`, false),
    claim(open, true),
    sql`UPDATE messages SET status = 'unconfirmed', last_error = ${IN_DOUBT}, updated_at = ${now}
        WHERE status = 'sending' AND campaign_lead_id IN (${claimed})
          AND step = (SELECT next_step FROM campaign_leads WHERE id = messages.campaign_lead_id)`,
    sql`SELECT cl.id AS record_id, cl.next_step AS step, cl.spintax_modulo_index, cl.claim_from_rotation, l.email AS lead_email, l.first_name, l.last_name, l.company_name,
               l.phone_number, l.website, l.location, l.linkedin_profile, l.company_url, l.custom_fields, l.timezone AS lead_timezone,
               m.id AS message_row_id, m.status AS message_status, m.attempts AS attempts,
               coalesce(m.message_id, '<' || lower(hex(randomblob(16))) || '@' || ${request.senderDomain} || '>') AS message_id,
               (${refusal}) AS refusal,
               (SELECT json_group_array(json_object('messageId', p.message_id, 'subject', p.subject)) FROM
                  (SELECT message_id, subject FROM messages WHERE campaign_lead_id = cl.id AND step < cl.next_step
                     AND status IN ('sent', 'unconfirmed') ORDER BY step) AS p) AS thread
        FROM campaign_leads cl JOIN leads l ON l.id = cl.lead_id
        LEFT JOIN messages m ON m.campaign_lead_id = cl.id AND m.step = cl.next_step
        WHERE cl.claim_token = ${nonce}
        ORDER BY cl.id`,
  ]);
  const records = results[3]!.map((row) => ({
    recordId: Number(row.record_id),
    step: Number(row.step),
    spintaxIndex: row.spintax_modulo_index == null ? null : Number(row.spintax_modulo_index),
    leadEmail: String(row.lead_email),
    lead: {
      email: String(row.lead_email),
      first_name: row.first_name as string | null,
      last_name: row.last_name as string | null,
      company_name: row.company_name as string | null,
      phone_number: row.phone_number as string | null,
      website: row.website as string | null,
      location: row.location as string | null,
      linkedin_profile: row.linkedin_profile as string | null,
      company_url: row.company_url as string | null,
      custom_fields: row.custom_fields === null ? null : (JSON.parse(String(row.custom_fields)) as Record<string, unknown>),
    },
    messageRowId: row.message_row_id === null ? null : Number(row.message_row_id),
    messageStatus: (row.message_status as MessageStatus | null) ?? null,
    messageId: String(row.message_id),
    attempts: Number(row.attempts ?? 0),
    thread: JSON.parse(String(row.thread ?? "[]")) as { messageId: string; subject: string | null }[],
    refusal: (row.refusal as ClaimedRecord["refusal"]) ?? null,
    leadTimezone: (row.lead_timezone as string | null) ?? null,
    pinned: !row.claim_from_rotation,
  }));
  return { nonce, records };
}

/** What a message left `sending` by a pass that died says (its `last_error`). */
const IN_DOUBT = "The sender stopped during this email's SMTP transaction: it may or may not have gone out, and it is never sent again";

/**
 * Opens claimed records' messages right before their SMTP transactions (`sending`), or for a step
 * that cannot be sent (`failed`): each row inserted, or a `deferred` one taken up again (one attempt
 * more for `sending`). Only while the record is still this claim's and live and its campaign is
 * ACTIVE: a claim released meanwhile (its pass presumed dead), a lead stopped by a reply, a paused
 * campaign, or a row in any other state writes nothing and returns no row, and nothing is sent.
 * This guard, not the lease, is what makes two passes never send one step twice. One statement for
 * a whole window (RETURNING each opened row's `id` and `record_id`), so the sender opens a window in
 * the batch that stores the outcomes before it; rows are inserted in the records' order.
 */
export function openStatement(
  claim: { nonce: string; mailboxId: number; now: number },
  records: Pick<ClaimedRecord, "recordId" | "step" | "messageId" | "leadEmail">[],
  open: { status: "sending" } | { status: "failed"; error: string } = { status: "sending" },
): SQL {
  const { nonce, mailboxId, now } = claim;
  const sending = open.status === "sending" ? 1 : 0;
  const rows = jsonList(records.map((r) => ({ id: r.recordId, step: r.step, message_id: r.messageId, to: r.leadEmail })));
  const failed = open.status === "failed";
  return sql`INSERT INTO messages (account_id, campaign_id, campaign_lead_id, step, email_account_id, message_id, status, attempts, last_error, to_email, failed_at, created_at, updated_at)
      SELECT cl.account_id, cl.campaign_id, cl.id, v.value ->> '$.step', ${mailboxId}, v.value ->> '$.message_id', ${open.status}, ${sending},
             ${failed ? open.error : null}, v.value ->> '$.to', ${failed ? now : null}, ${now}, ${now}
      FROM json_each(${rows}) AS v JOIN campaign_leads cl ON cl.id = v.value ->> '$.id'
      WHERE cl.claim_token = ${nonce} AND cl.state IN ${live}
        AND EXISTS (SELECT 1 FROM campaigns WHERE id = cl.campaign_id AND status = 'ACTIVE')
      ORDER BY v.key
      ON CONFLICT (campaign_lead_id, step) DO UPDATE SET status = excluded.status, attempts = messages.attempts + excluded.attempts,
        email_account_id = excluded.email_account_id, last_error = excluded.last_error, failed_at = excluded.failed_at, updated_at = excluded.updated_at
      WHERE messages.status = 'deferred'
      RETURNING id, campaign_lead_id AS record_id`;
}

/** The message rows an `openStatement` opened, by record id. */
export function openedRows(rows: Record<string, unknown>[] = []): Map<number, number> {
  return new Map(rows.map((row) => [Number(row.record_id), Number(row.id)]));
}

/** A message a pass that died left in doubt, now `unconfirmed`. */
interface InDoubt {
  messageRowId: number;
  campaignId: number;
  recordId: number;
}

/**
 * Run first by every pass of a mailbox (its object runs one pass at a time, so any claim of the
 * mailbox still held at that moment belongs to a pass that died: a crash, a restart, an error): the
 * message that pass had `sending` becomes `unconfirmed` (at most one: `storeLeftover` ran first and
 * withdrew those the journal says were never handed over), and its records are released at once,
 * due now, instead of when the lease runs out. A first step not yet written that its claim took from
 * rotation goes back to it (unpinned), as when a pass stops early; one pinned before keeps its mailbox. Two seeks: `campaign_leads_claimed_idx`, then each
 * record's `messages_record_step_idx`. The same batch then reads the mailbox's work
 * (`loadMailboxWork`), which the release does not change: one round trip for both.
 */
export async function startPass(db: Database, mailboxId: number, now: number, dayStart: number): Promise<{ inDoubt: InDoubt[]; work: MailboxWork }> {
  const held = sql`SELECT id FROM campaign_leads WHERE email_account_id = ${mailboxId} AND claim_token IS NOT NULL`;
  const [inDoubt, , ...work] = await db.batch([
    db
      .update(messages)
      .set({ status: "unconfirmed", lastError: IN_DOUBT, updatedAt: new Date(now) })
      .where(and(eq(messages.status, "sending"), sql`${messages.campaignLeadId} IN (${held})`))
      .returning({ messageRowId: messages.id, campaignId: messages.campaignId, recordId: messages.campaignLeadId }),
    db
      .update(campaignLeads)
      .set({
        claimToken: null,
        updatedAt: new Date(now),
        dueAt: sql`CASE WHEN state IN ${live} AND next_step IS NOT NULL THEN ${now} ELSE NULL END`,
        emailAccountId: sql`CASE WHEN claim_from_rotation AND next_step = 1 AND NOT EXISTS (SELECT 1 FROM messages WHERE campaign_lead_id = campaign_leads.id AND step = 1)
          THEN NULL ELSE email_account_id END`,
      })
      .where(sql`${campaignLeads.id} IN (${held})`),
    ...workQueries(db, mailboxId, dayStart),
  ]);
  return { inDoubt, work: workOf(work) };
}

/** How far back a mailbox's messages in doubt are reported (its `sending_status` warning). */
export const IN_DOUBT_REPORT_MS = 7 * 86_400_000;

/** A mailbox's messages in doubt since `since` (`messages_unconfirmed_idx`): how many and, newest first, a few recipients. */
export async function unconfirmedSends(d1: D1Database, mailboxId: number, since: number): Promise<{ count: number; recipients: string[] }> {
  const row = await statement(
    d1,
    sql`SELECT count(*) AS n, (SELECT json_group_array(to_email) FROM (
          SELECT to_email FROM messages WHERE email_account_id = ${mailboxId} AND status = 'unconfirmed' AND updated_at >= ${since}
          ORDER BY updated_at DESC LIMIT 5)) AS recipients
        FROM messages WHERE email_account_id = ${mailboxId} AND status = 'unconfirmed' AND updated_at >= ${since}`,
  ).first<{ n: number; recipients: string }>();
  return { count: Number(row?.n ?? 0), recipients: (JSON.parse(row?.recipients ?? "[]") as (string | null)[]).filter((r): r is string => r !== null) };
}

/**
 * The statements that store outcomes of a claim's records (the caller puts them in the same batch
 * as the events' ingestion, and the next window's openings). Every record update is guarded by the
 * claim, so a pass whose claim was released or whose lease ran out and was claimed again changes
 * nothing of the newer claim.
 */
export function outcomeStatements(nonce: string, outcomes: RecordOutcome[], now: number): SQL[] {
  const statements: SQL[] = [];
  const withdrawn = outcomes.flatMap((o) => (o.kind === "withdrawn" ? [{ id: o.recordId, step: o.step, prior: o.prior }] : []));
  if (withdrawn.length > 0) {
    // Before the records' update below, which ends the claim these guards name.
    const rows = (prior: "IS NULL" | "= 'deferred'") => sql`SELECT m.id FROM json_each(${jsonList(withdrawn)}) AS v
      JOIN messages m ON m.campaign_lead_id = v.value ->> '$.id' AND m.step = v.value ->> '$.step'
      WHERE v.value ->> '$.prior' ${sql.raw(prior)} AND m.status = 'sending'
        AND EXISTS (SELECT 1 FROM campaign_leads WHERE id = m.campaign_lead_id AND claim_token = ${nonce})`;
    statements.push(sql`DELETE FROM messages WHERE id IN (${rows("IS NULL")})`);
    statements.push(sql`UPDATE messages SET status = 'deferred', attempts = attempts - 1, updated_at = ${now} WHERE id IN (${rows("= 'deferred'")})`);
  }
  const messagesJson = jsonList(
    outcomes.flatMap((o): { id: number; status: string; error: string | null; sent_at: number | null; subject: string | null; attempt: number }[] => {
      switch (o.kind) {
        case "sent":
          return [{ id: o.messageRowId, status: "sent", error: null, sent_at: o.sentAt, subject: o.subject, attempt: 0 }];
        case "deferred":
          return [{ id: o.messageRowId, status: "deferred", error: o.error, sent_at: null, subject: null, attempt: o.countAttempt ? 0 : -1 }];
        case "failed":
        case "bounced":
        case "unconfirmed":
          return [{ id: o.messageRowId, status: o.kind, error: o.error, sent_at: null, subject: null, attempt: 0 }];
        default:
          return [];
      }
    }),
  );
  statements.push(sql`
    UPDATE messages SET status = v.value ->> '$.status', last_error = v.value ->> '$.error',
           sent_at = coalesce(v.value ->> '$.sent_at', messages.sent_at), subject = coalesce(v.value ->> '$.subject', messages.subject),
           attempts = messages.attempts + (v.value ->> '$.attempt'),
           failed_at = CASE WHEN v.value ->> '$.status' = 'failed' THEN ${now} ELSE messages.failed_at END, updated_at = ${now}
    FROM json_each(${messagesJson}) AS v WHERE messages.id = v.value ->> '$.id'`);
  const records = jsonList(
    outcomes.map((o) => {
      switch (o.kind) {
        case "sent":
        case "skipped":
        case "unconfirmed":
          return { id: o.recordId, next_step: o.nextStep, due_at: o.nextDueAt, done: o.nextStep === null ? 1 : 0, unpin: 0, state: null };
        case "released":
        case "withdrawn":
          return { id: o.recordId, next_step: -1, due_at: o.dueAt, done: 0, unpin: o.unpin ? 1 : 0, state: null };
        case "deferred":
          return { id: o.recordId, next_step: -1, due_at: o.retryAt, done: 0, unpin: o.unpin ? 1 : 0, state: null };
        case "failed":
          return { id: o.recordId, next_step: -1, due_at: null, done: 0, unpin: 0, state: null };
        case "bounced":
          return { id: o.recordId, next_step: -1, due_at: null, done: 0, unpin: 0, state: null };
        case "refused":
          return { id: o.recordId, next_step: -1, due_at: null, done: 0, unpin: 0, state: o.state, reason: o.reason ?? null };
      }
    }),
  );
  // next_step -1 = keep the current one. A finished sequence completes a live record.
  statements.push(sql`
    UPDATE campaign_leads SET
      next_step = CASE WHEN v.value ->> '$.next_step' = -1 THEN campaign_leads.next_step ELSE v.value ->> '$.next_step' END,
      due_at = CASE WHEN campaign_leads.state IN ${live} THEN v.value ->> '$.due_at' ELSE NULL END,
      state = CASE
        WHEN v.value ->> '$.state' IS NOT NULL THEN v.value ->> '$.state'
        WHEN v.value ->> '$.done' = 1 AND campaign_leads.state IN ${live} THEN 'COMPLETED'
        ELSE campaign_leads.state END,
      email_account_id = CASE WHEN v.value ->> '$.unpin' = 1 THEN NULL ELSE campaign_leads.email_account_id END,
      blocked_reason = coalesce(v.value ->> '$.reason', campaign_leads.blocked_reason),
      claim_token = NULL, updated_at = ${now}
    FROM json_each(${records}) AS v
    WHERE campaign_leads.id = v.value ->> '$.id' AND campaign_leads.claim_token = ${nonce}`);
  return statements;
}

/** Suspends a mailbox whose server refused its login: nothing is sent from it until it is fixed. */
export function suspendStatement(mailboxId: number, reason: string, now: number): SQL {
  return sql`UPDATE email_accounts SET is_suspended = 1, is_smtp_success = 0, smtp_failure_error = ${reason}, checked_at = ${now}, updated_at = ${now}
             WHERE id = ${mailboxId}`;
}
