import type { EventType } from "../db/schema";
import type { TrackPayload } from "./tokens";

/** One tracking hit to record: the body of a tracking queue message, and what unsubscribe records at once. */
export interface TrackedEvent {
  type: Extract<EventType, "OPEN" | "CLICK" | "UNSUBSCRIBE">;
  payload: TrackPayload;
  occurredAt: number;
  isMachine: boolean;
  /** Each hit's own id (a redelivered queue message records nothing more); fixed per record for unsubscribe. */
  eventId: string;
}

/**
 * A tracking queue message: the hits one isolate answered within a few milliseconds of each other
 * (src/tracking/routes.ts), one message for all of them. A message sent before hits were batched holds
 * one hit itself; the consumer reads both for as long as such a message can be retried (about 7 hours).
 */
export type TrackingMessage = TrackedEvent[] | TrackedEvent;

/** The hits a tracking queue message carries. */
export function hitsOf(message: TrackingMessage): TrackedEvent[] {
  return Array.isArray(message) ? message : [message];
}

/** Hits one queue message carries at most (a burst past it opens another message). */
export const HITS_PER_MESSAGE = 100;

/**
 * Hits one write of the consumer records at most. A write costs four D1 round trips whatever its
 * size, so a second of bursts (about 35 messages here) goes in one; a write whose rows would not fit
 * one statement's list parameter is halved (src/tracking/store.ts).
 */
export const HITS_PER_WRITE = 1000;

/**
 * A batch's messages in the groups the consumer records together, in order: as many messages as
 * hold HITS_PER_WRITE hits at most (a message alone when it holds more), so the hits one write
 * reads records for and plans stay bounded however many messages a batch brings.
 */
export function writeGroups<M extends { body: TrackingMessage }>(messages: readonly M[]): M[][] {
  const groups: M[][] = [];
  let hits = 0;
  for (const message of messages) {
    const count = hitsOf(message.body).length;
    const last = groups.at(-1);
    if (last && hits + count <= HITS_PER_WRITE) {
      last.push(message);
      hits += count;
    } else {
      groups.push([message]);
      hits = count;
    }
  }
  return groups;
}

/** Every environment names its tracking queue `salvo-tracking…` (see wrangler.toml). */
export function isTrackingQueue(name: string): boolean {
  return name.startsWith("salvo-tracking");
}
