import type { CampaignStatus } from "../db/schema";

/** What a caller may ask of a campaign, and the status each request leads to. */
export const STATUS_COMMANDS = ["START", "PAUSED", "STOPPED"] as const;
export type StatusCommand = (typeof STATUS_COMMANDS)[number];

const TARGET: Record<StatusCommand, CampaignStatus> = { START: "ACTIVE", PAUSED: "PAUSED", STOPPED: "STOPPED" };

/** The status after a command, or null when the move is not allowed (STOPPED is final). */
export function nextCampaignStatus(current: CampaignStatus, command: StatusCommand): CampaignStatus | null {
  if (current === "STOPPED") return command === "STOPPED" ? "STOPPED" : null;
  return TARGET[command];
}
