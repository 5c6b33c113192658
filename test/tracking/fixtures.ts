import type { TrackedEvent } from "../../src/tracking/queue-message";

/** An open of a record's email as the tracking route queues it, with an id of its own. */
export function openHit(recordId: number, sentAt = Date.now() - 60_000, occurredAt = Date.now()): TrackedEvent {
  return {
    type: "OPEN",
    payload: { kind: "open", recordId, step: 1, mailboxId: null, sentAt },
    occurredAt,
    isMachine: false,
    eventId: `salvo-open:${crypto.randomUUID()}`,
  };
}
