import type { CampaignStatus, EventType } from "../db/schema";
import type { Bindings } from "../config";
import { fanOutCategoryChange, fanOutEvents, fanOutStatusChange } from "../webhooks/fanout";

/**
 * The seam between what changes campaign data and what must hear about it (webhook fan-out).
 * Callers invoke these after their D1 batch has committed, inside the same request, and await them.
 */

export interface StoredEventNotice {
  /** Row id in `events` (the `stats_id` of SENT and REPLY messages). */
  id: number;
  campaignLeadId: number;
  type: EventType;
  occurredAt: Date;
  sequenceNumber: number;
  /** True when this SENT is the record's first sequence-1 send (webhook kind FIRST_EMAIL_SENT). */
  firstSend: boolean;
}

export interface EventsStored {
  accountId: number;
  campaignId: number;
  events: StoredEventNotice[];
}

export interface LeadCategoryChanged {
  accountId: number;
  campaignId: number;
  campaignLeadId: number;
  oldCategoryId: number | null;
  newCategoryId: number | null;
  occurredAt: Date;
}

export interface CampaignStatusChanged {
  accountId: number;
  campaignId: number;
  oldStatus: CampaignStatus;
  newStatus: CampaignStatus;
  occurredAt: Date;
}

export function onEventsStored(env: Bindings, change: EventsStored): Promise<void> {
  return fanOutEvents(env, change);
}

export function onLeadCategoryChanged(env: Bindings, change: LeadCategoryChanged): Promise<void> {
  return fanOutCategoryChange(env, change);
}

export function onCampaignStatusChanged(env: Bindings, change: CampaignStatusChanged): Promise<void> {
  return fanOutStatusChange(env, change);
}
