import type { CampaignStatus } from "../db/schema";

/**
 * What a caller may ask of a campaign, and the status each request leads to. The hosted words are
 * START, PAUSED and STOPPED; the vendor CLI's help writes PAUSE and STOP, other clients ACTIVE and RESUME.
 */
export const STATUS_COMMANDS = ["START", "PAUSED", "STOPPED", "PAUSE", "STOP", "ACTIVE", "RESUME"] as const;
type StatusCommand = (typeof STATUS_COMMANDS)[number];

const TARGET: Record<StatusCommand, CampaignStatus> = {
  START: "ACTIVE",
  ACTIVE: "ACTIVE",
  RESUME: "ACTIVE",
  PAUSED: "PAUSED",
  PAUSE: "PAUSED",
  STOPPED: "STOPPED",
  STOP: "STOPPED",
};

/** The status after a command, or null when the move is not allowed (STOPPED is final). */
export function nextCampaignStatus(current: CampaignStatus, command: StatusCommand): CampaignStatus | null {
  if (current === "STOPPED") return TARGET[command] === "STOPPED" ? "STOPPED" : null;
  return TARGET[command];
}

/** Ids in the order first given, each once. */
export function distinctIds(ids: readonly number[]): number[] {
  return [...new Set(ids)];
}
