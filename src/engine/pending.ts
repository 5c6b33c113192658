import { eq, type SQL } from "drizzle-orm";
import { campaigns as campaignsTable, emailAccounts } from "../db/schema";
import type { Bindings } from "../platform/env";
import { planIngestion } from "../events/plan";
import { offloadPlanBodies } from "../events/offload";
import { bodyStore } from "../platform/bodies";
import { ingestedDeliveryIds, ingestionStatements, loadIngestContext, type IngestContext } from "../events/store";
import type { Database } from "../platform/db";
import { log } from "../platform/logging";
import { rawBatch } from "../platform/sql";
import { disconnectAnnouncement } from "../webhooks/disconnect";
import { deliveryIds, enqueue } from "../webhooks/outbox";
import type { RecordOutcome } from "./outcome";
import { outcomeStatements, suspendStatement, type CampaignRow, type MailboxRow } from "./store";
import { holdOver, holdStatement } from "../mailboxes/hold";
import type { Finished, Leftover, SendJournal } from "./journal";

/** Outcomes one `store` took; `committed` once its batch is (they are then never pending again). */
interface Taken {
  settled: RecordOutcome[];
  finished: Finished[];
  committed: boolean;
}

/** What storing a claim's outcomes needs to know of it. */
export interface ClaimFacts {
  campaign: CampaignRow;
  mailbox: MailboxRow;
  nonce: string;
  now: number;
  /** The claim's records: their ingestion context is read once, at the claim's first event. */
  recordIds: number[];
}

/**
 * A claim's outcomes not yet stored: finished transactions and records settled without SMTP
 * (refusals, skips, releases, withdrawals). `store` commits them in ONE batch, with the statements
 * given (the next window's openings) last: each transaction's event through the ingestion
 * statements (analytics, inbox, webhook deliveries as for pushed events), the message rows and
 * records, and a refused login's suspension and announcement; then it queues the deliveries and
 * tells the journal that D1 holds them.
 */
export class PendingOutcomes {
  private settled: RecordOutcome[] = [];
  private finished: Finished[] = [];
  private context: IngestContext | null = null;

  constructor(
    private readonly env: Bindings,
    private readonly db: Database,
    private readonly claim: ClaimFacts,
    private readonly journal: SendJournal,
  ) {}

  settle(outcome: RecordOutcome): void {
    this.settled.push(outcome);
  }

  finish(finished: Finished): void {
    this.finished.push(finished);
  }

  /**
   * Commits what is pending with `after` (a window's opening) last in the same batch; answers the rows
   * `after` returned. What ends while the batch is on its way waits for the next one; should the batch
   * fail, what it took is pending again.
   */
  async store(after: SQL | null = null): Promise<Record<string, unknown>[]> {
    const taken: Taken = { settled: this.settled, finished: this.finished, committed: false };
    this.settled = [];
    this.finished = [];
    try {
      return await this.commit(taken, after);
    } catch (error) {
      if (!taken.committed) {
        this.settled = [...taken.settled, ...this.settled];
        this.finished = [...taken.finished, ...this.finished];
      }
      throw error;
    }
  }

  private async commit(taken: Taken, after: SQL | null): Promise<Record<string, unknown>[]> {
    const { settled, finished } = taken;
    const { campaign, mailbox, now } = this.claim;
    const statements: SQL[] = [];
    // Transactions with an event (a SENT, or a BOUNCE) on a message row: the others record none.
    const events = finished.flatMap(({ record, outcome, event }) => (event && "messageRowId" in outcome ? [{ record, event, messageRowId: outcome.messageRowId }] : []));
    let deliveries: ReturnType<typeof planIngestion>["deliveries"] = [];
    if (events.length > 0) {
      this.context ??= await loadIngestContext(this.db, eq(campaignsTable.accountId, campaign.accountId), campaign.accountId, campaign.id, {
        recordIds: this.claim.recordIds,
        emails: [],
        categoryIds: [],
      });
      const context = this.context;
      const incoming = events.flatMap(({ record, event, messageRowId }) => {
        const row = context.records.find((r) => r.id === record.recordId);
        if (!row) return [];
        return [
          {
            eventId: `salvo:${event.type.toLowerCase()}:${messageRowId}`,
            record: row,
            incoming: {
              type: event.type,
              occurredAt: now,
              sequenceNumber: record.step,
              emailAccountId: mailbox.id,
              fromEmail: mailbox.fromEmail,
              isOoo: false,
              categoryId: null,
            },
            toEmail: record.leadEmail,
            subject: event.subject,
            body: event.body,
            messageId: event.messageId,
            linkUrl: null,
          },
        ];
      });
      if (incoming.length > 0) {
        const plan = await offloadPlanBodies(bodyStore(this.env), campaign.accountId, planIngestion(context, campaign, incoming));
        deliveries = plan.deliveries;
        statements.push(...ingestionStatements(campaign, plan.rows, plan.deliveries, now));
      }
    }
    const ingested = statements.length > 0;
    const outcomes = [...settled, ...finished.map((f) => f.outcome)];
    if (outcomes.length > 0) statements.push(...outcomeStatements(this.claim.nonce, outcomes, now));
    const suspend = finished.find((f) => f.suspend !== null)?.suspend ?? null;
    const announce = suspend === null ? null : await disconnectAnnouncement(this.db, mailbox, { smtp: suspend, imap: null }, now);
    const announceAt = statements.length;
    if (announce !== null) statements.push(announce);
    if (suspend !== null) statements.push(suspendStatement(mailbox.id, suspend, now));
    const hold = finished.find((f) => f.hold)?.hold;
    // A sent email ends a hold the pass began under (the mailbox row is the pass's); the first such batch clears it.
    if (hold) statements.push(holdStatement(mailbox.id, hold, now));
    else if (finished.some((f) => f.outcome.kind === "sent")) statements.push(...holdOver(mailbox, now));
    const afterAt = statements.length;
    if (after !== null) statements.push(after);
    if (statements.length === 0) return [];
    const results = await rawBatch(this.env.DB, statements);
    taken.committed = true;
    this.journal.stored(outcomes.map((o) => o.recordId));
    if (ingested) await enqueue(this.env, ingestedDeliveryIds(results, deliveries));
    if (announce !== null) await enqueue(this.env, deliveryIds(results[announceAt]));
    if (suspend !== null) log("warn", "mailbox suspended: its server refused the login", { mailbox_id: mailbox.id });
    return after === null ? [] : (results[afterAt] ?? []);
  }
}

/**
 * Stores what a pass that died knew (its journal's leftover), before `startPass` judges
 * what it left `sending`: the outcomes of the transactions it finished, as it would have stored
 * them, and the messages it opened but never handed over, withdrawn. Only the one it was handing
 * over, if any, stays `sending`, and turns `unconfirmed`. Record writes are guarded by the dead claim
 * (a record claimed again since is not touched), a withdrawal also by the row still `sending`, and
 * events by their ids, so storing twice is harmless.
 */
export async function storeLeftover(env: Bindings, db: Database, mailboxId: number, leftover: Leftover, now: number, journal: SendJournal): Promise<void> {
  const [mailbox] = await db.select().from(emailAccounts).where(eq(emailAccounts.id, mailboxId));
  if (!mailbox) return;
  const over = leftover.handingOver;
  const ended = new Set(leftover.done.map((d) => `${d.nonce}:${d.finished.record.recordId}`));
  const withdrawn = leftover.opened.filter((o) => !ended.has(`${o.nonce}:${o.recordId}`) && !(over && over.recordId === o.recordId && over.nonce === o.nonce));
  for (const claim of leftover.claims) {
    const done = leftover.done.filter((d) => d.nonce === claim.nonce).map((d) => d.finished);
    const facts = { campaign: claim.campaign, mailbox, nonce: claim.nonce, now: claim.now, recordIds: done.map((f) => f.record.recordId) };
    const pending = new PendingOutcomes(env, db, facts, journal);
    for (const finished of done) pending.finish(finished);
    for (const o of withdrawn.filter((w) => w.nonce === claim.nonce)) {
      pending.settle({ kind: "withdrawn", recordId: o.recordId, step: o.step, prior: o.prior, dueAt: now, unpin: o.step === 1 });
    }
    await pending.store();
  }
  log("warn", "a pass that died left its journal: its known outcomes stored, the messages it never handed over withdrawn", {
    mailbox_id: mailboxId,
    stored: leftover.done.length,
    withdrawn: withdrawn.length,
  });
}
