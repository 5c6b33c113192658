import type { RecordOutcome } from "./outcome";
import type { SendHold } from "../mailboxes/hold";
import type { CampaignRow, ClaimedRecord } from "./store";

/**
 * The sender's journal, in its mailbox object's own storage: what D1 cannot yet say about the
 * messages a pass opened. A pass opens a window of messages in one D1 batch (`sending`), then hands
 * them to the server one at a time, and stores their outcomes with the next window's opening. The
 * journal says, at any instant, which opened message is being handed over (written durably before
 * its content starts) and which ended how (written as soon as it ends), so the next pass after a
 * crash stores the outcomes the dead pass knew, withdraws the messages it never handed over, and
 * leaves only the one in flight in doubt, as when messages were opened one at a time.
 */

/** What one SMTP transaction came to: the record's outcome, the event it records, a suspension. */
export interface Finished {
  record: Pick<ClaimedRecord, "recordId" | "step" | "leadEmail">;
  outcome: RecordOutcome;
  event: { type: "SENT" | "BOUNCE"; subject: string | null; body: string | null; messageId: string | null } | null;
  suspend: string | null;
  /** Hold the mailbox's sending until then, with the server's words (absent in journals written before it existed). */
  hold?: SendHold | null;
}

/** A message a window opened: its record's step, and its row's state before the opening (none, or deferred). */
export interface Opened {
  nonce: string;
  recordId: number;
  step: number;
  prior: "deferred" | null;
}

/** A finished transaction whose outcome D1 may not hold yet. */
export interface Done {
  nonce: string;
  finished: Finished;
}

/** What storing a claim's outcomes needs beyond them: its campaign and the pass's clock. */
export interface JournaledClaim {
  nonce: string;
  now: number;
  campaign: CampaignRow;
}

/** What a pass that died left: its claims, messages opened, the one last handed over, and how those that ended did. */
export interface Leftover {
  claims: JournaledClaim[];
  opened: Opened[];
  handingOver: Opened | null;
  done: Done[];
}

/** Past this many characters an event's body is not journaled (a stored value holds at most 2 MB); a replay then records it without. */
const MAX_JOURNALED_BODY = 500_000;

const CLAIM = "send:claim:";
const OPENED = "send:opened";
const HANDING_OVER = "send:over";
const DONE = "send:done:";

/**
 * Two writes a message (the one handed over, flushed; how it ended) and two a window (its openings,
 * then what D1 holds of them); an ended message's entry stays until D1 holds its outcome, and counts
 * only while its opening is listed.
 */
export class SendJournal {
  private claimed: string | null = null;

  constructor(
    private readonly kv: SyncKvStorage,
    /** Resolves once what was written is on disk. */
    private readonly flush: () => Promise<void>,
  ) {}

  /** Written before the batch that opens them: a crash right after that batch still knows them. */
  opening(claim: JournaledClaim, entries: Opened[]): void {
    if (this.claimed !== claim.nonce) {
      this.kv.put(`${CLAIM}${claim.nonce}`, claim);
      this.claimed = claim.nonce;
    }
    this.kv.put(OPENED, [...(this.kv.get<Opened[]>(OPENED) ?? []), ...entries]);
  }

  /**
   * Durable before the first byte of the message's content is written (its envelope may have gone
   * before: a transaction whose content never started delivers nothing), so an opened message never
   * named here was never handed over.
   */
  async handingOver(entry: Opened): Promise<void> {
    this.kv.put(HANDING_OVER, entry);
    await this.flush();
  }

  /** How the message last handed over ended (its entry outranks the hand-over: it is no longer in doubt). */
  ended(done: Done): void {
    const { event } = done.finished;
    const kept = event?.body && event.body.length > MAX_JOURNALED_BODY ? { ...done, finished: { ...done.finished, event: { ...event, body: null } } } : done;
    this.kv.put(`${DONE}${done.finished.record.recordId}`, kept);
  }

  /** D1 now holds these records' outcomes: their openings, and how those that ended did, are done with. */
  stored(recordIds: number[]): void {
    const opened = this.kv.get<Opened[]>(OPENED);
    if (!opened) return;
    const gone = new Set(recordIds);
    // Here, not at the claim's end: the list there would read every entry back, event body and all.
    for (const entry of opened) if (gone.has(entry.recordId)) this.kv.delete(`${DONE}${entry.recordId}`);
    const left = opened.filter((entry) => !gone.has(entry.recordId));
    if (left.length === opened.length) return;
    if (left.length > 0) this.kv.put(OPENED, left);
    else this.kv.delete(OPENED);
  }

  /** What a pass that died left (null: nothing), the ended entries of openings still listed only. */
  leftover(): Leftover | null {
    const opened = this.kv.get<Opened[]>(OPENED) ?? [];
    if (opened.length === 0) return null;
    const listed = new Set(opened.map((entry) => `${entry.nonce}:${entry.recordId}`));
    const done = [...this.kv.list<Done>({ prefix: DONE })].map(([, value]) => value).filter((d) => listed.has(`${d.nonce}:${d.finished.record.recordId}`));
    const claims = [...this.kv.list<JournaledClaim>({ prefix: CLAIM })].map(([, value]) => value);
    return { claims, opened, handingOver: this.kv.get<Opened>(HANDING_OVER) ?? null, done };
  }

  /** The claim is over (or a dead pass's leftover stored): nothing of it is needed again. */
  clear(): void {
    for (const prefix of [CLAIM, DONE]) for (const [key] of [...this.kv.list({ prefix })]) this.kv.delete(key);
    this.kv.delete(OPENED);
    this.kv.delete(HANDING_OVER);
    this.claimed = null;
  }
}
