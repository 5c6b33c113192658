import { OUT_OF_OFFICE_CATEGORY_ID, type EventType, type RecordState } from "../db/schema";

/** What ingestion needs to know about one event to work out its effects. */
export interface IncomingEvent {
  type: EventType;
  occurredAt: number;
  sequenceNumber: number;
  emailAccountId: number | null;
  fromEmail: string | null;
  isOoo: boolean;
  categoryId: number | null;
}

/** What has happened to a campaign record, kept current by ingestion (the inbox filters on these). */
export interface RecordFlags {
  hasSent: boolean;
  hasOpened: boolean;
  hasClicked: boolean;
  hasReplied: boolean;
  hasBounced: boolean;
  hasUnsubscribed: boolean;
}

export interface RecordSnapshot extends RecordFlags {
  state: RecordState;
  leadEmail: string;
  categoryId: number | null;
  emailAccountId: number | null;
  lastSentAt: number | null;
  lastReplyAt: number | null;
}

/**
 * The sequence number of a SENT that is a person's message in the thread (a reply sent from the
 * inbox, src/replies/outbound.ts), no step of the campaign (CONTRACT 12): the thread shows it, but it
 * sends no step, moves no record state or flag and counts in no campaign figure or webhook. Steps
 * start at 1 (the events API takes no lower), so nothing else stores it.
 */
export const PERSON_STEP = 0;

/** Whether an event is a send of the campaign: a SENT of one of its steps. */
export function isStepSend(event: Pick<IncomingEvent, "type" | "sequenceNumber">): boolean {
  return event.type === "SENT" && event.sequenceNumber !== PERSON_STEP;
}

export function isOutOfOffice(event: Pick<IncomingEvent, "isOoo" | "categoryId">): boolean {
  return event.isOoo || event.categoryId === OUT_OF_OFFICE_CATEGORY_ID;
}

/**
 * Analytics rule 3: a reply is ignored when someone other than the lead sent it (forwards,
 * self-sends), or when it is out-of-office and the account ignores those. A reply with no
 * sender given is taken to come from the lead.
 */
export function isIgnoredReply(event: IncomingEvent, leadEmail: string, ignoreOooReplies: boolean): boolean {
  if (event.type !== "REPLY") return false;
  const sender = event.fromEmail?.trim().toLowerCase();
  if (sender && sender !== leadEmail.toLowerCase()) return true;
  return ignoreOooReplies && isOutOfOffice(event);
}

function nextState(state: RecordState, event: IncomingEvent): RecordState {
  switch (event.type) {
    case "SENT":
      return isStepSend(event) && (state === "DRAFTED" || state === "STARTED") ? "INPROGRESS" : state;
    case "BOUNCE":
    case "BLOCK":
      return state === "STOPPED" ? state : "BLOCKED";
    case "UNSUBSCRIBE":
      return "STOPPED";
    default:
      return state;
  }
}

/**
 * A record after new events (in any order): state moves in event-time order, flags and last
 * times only ever grow, and the most recent categorised reply sets the category.
 */
export function applyEvents(record: RecordSnapshot, events: IncomingEvent[]): RecordSnapshot & { isUnread: boolean } {
  const ordered = [...events].sort((a, b) => a.occurredAt - b.occurredAt);
  const next = { ...record, isUnread: false };
  let categorisedAt = -Infinity;
  for (const event of ordered) {
    next.state = nextState(next.state, event);
    switch (event.type) {
      case "SENT":
        if (!isStepSend(event)) break;
        next.hasSent = true;
        next.lastSentAt = Math.max(next.lastSentAt ?? event.occurredAt, event.occurredAt);
        next.emailAccountId = event.emailAccountId ?? next.emailAccountId;
        break;
      case "OPEN":
        next.hasOpened = true;
        break;
      case "CLICK":
        next.hasClicked = true;
        break;
      case "REPLY":
        next.hasReplied = true;
        next.isUnread = true;
        next.lastReplyAt = Math.max(next.lastReplyAt ?? event.occurredAt, event.occurredAt);
        if (event.categoryId !== null && event.occurredAt > categorisedAt) {
          next.categoryId = event.categoryId;
          categorisedAt = event.occurredAt;
        }
        break;
      case "BOUNCE":
        next.hasBounced = true;
        break;
      case "UNSUBSCRIBE":
        next.hasUnsubscribed = true;
        break;
      case "BLOCK":
        break;
    }
  }
  return next;
}
