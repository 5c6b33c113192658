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

/** Every environment names its tracking queue `salvo-tracking…` (see wrangler.toml). */
export function isTrackingQueue(name: string): boolean {
  return name.startsWith("salvo-tracking");
}
