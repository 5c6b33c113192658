import type { RecordOutcome } from "./outcome";
import type { CampaignRow, ClaimedRecord } from "./store";

/**
 * The sender's journal, in its mailbox object's own storage: what D1 cannot yet say about the
 * messages a pass opened. A pass opens a window of messages in one D1 batch (`sending`), then hands
 * them to the server one at a time, and stores their outcomes with the next window's opening. The
 * journal says, at any instant, which opened message is being handed over (written durably before
 * its transaction starts) and which ended how (written as soon as it ends), so the next pass after a
 * crash stores the outcomes the dead pass knew, withdraws the messages it never handed over, and
 * leaves only the one in flight in doubt, as when messages were opened one at a time.
 */

/** What one SMTP transaction came to: the record's outcome, the event it records, a suspension. */
export interface Finished {
  record: Pick<ClaimedRecord, "recordId" | "step" | "leadEmail">;
  outcome: RecordOutcome;
  event: { type: "SENT" | "BOUNCE"; subject: string | null; body: string | null; messageId: string | null } | null;
  suspend: string | null;
}

/** A message a window opened: its record's step, and its row's state before the opening (none, or deferred). */
export interface Opened {
  nonce: string;
  recordId: number;
  step: number;
  prior: "deferred" | null;
}

/** A finished transaction whose outcome D1 does not hold yet, with what storing it needs. */
export interface Done {
  nonce: string;
  now: number;
  campaign: CampaignRow;
  finished: Finished;
}

/** What a pass that died left: messages opened, the one being handed over, and outcomes not stored. */
export interface Leftover {
  opened: Opened[];
  handingOver: Opened | null;
  done: Done[];
}

/** Past this many characters an event's body is not journaled (a stored value holds at most 2 MB); a replay then records it without. */
const MAX_JOURNALED_BODY = 500_000;

const OPENED = "send:opened";
const HANDING_OVER = "send:over";
const DONE = "send:done:";

export class SendJournal {
  constructor(
    private readonly kv: SyncKvStorage,
    /** Resolves once what was written is on disk. */
    private readonly flush: () => Promise<void>,
  ) {}

  /** Written before the batch that opens them: a crash right after that batch still knows them. */
  opening(entries: Opened[]): void {
    this.kv.put(OPENED, [...(this.kv.get<Opened[]>(OPENED) ?? []), ...entries]);
  }

  /** Durable before the message's first command is written: a message not named here was never handed over. */
  async handingOver(entry: Opened): Promise<void> {
    this.kv.put(HANDING_OVER, entry);
    await this.flush();
  }

  ended(done: Done): void {
    const { event } = done.finished;
    const kept = event?.body && event.body.length > MAX_JOURNALED_BODY ? { ...done, finished: { ...done.finished, event: { ...event, body: null } } } : done;
    this.kv.put(`${DONE}${done.finished.record.recordId}`, kept);
    this.kv.delete(HANDING_OVER);
  }

  /** D1 now holds these records' outcomes. */
  stored(recordIds: number[]): void {
    if (recordIds.length === 0) return;
    const gone = new Set(recordIds);
    for (const id of gone) this.kv.delete(`${DONE}${id}`);
    const opened = (this.kv.get<Opened[]>(OPENED) ?? []).filter((entry) => !gone.has(entry.recordId));
    if (opened.length > 0) this.kv.put(OPENED, opened);
    else this.kv.delete(OPENED);
  }

  leftover(): Leftover | null {
    const opened = this.kv.get<Opened[]>(OPENED) ?? [];
    const done = [...this.kv.list<Done>({ prefix: DONE })].map(([, value]) => value);
    if (opened.length === 0 && done.length === 0) return null;
    return { opened, handingOver: this.kv.get<Opened>(HANDING_OVER) ?? null, done };
  }

  clear(): void {
    this.kv.delete(OPENED);
    this.kv.delete(HANDING_OVER);
    for (const [key] of [...this.kv.list({ prefix: DONE })]) this.kv.delete(key);
  }
}
