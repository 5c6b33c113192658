import { z } from "@hono/zod-openapi";
import { findCampaignRecord, findRecordOfLead, type CampaignRecordRow } from "../platform/access";
import type { Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import type { Principal } from "../platform/principal";

/** What every action on one conversation says about naming it (the reference's words). */
export const INBOX_TARGET =
  "The conversation is `email_lead_map_id` (number or decimal string), or the lead's record in a campaign given as `lead_id` + " +
  "`campaign_id` (`lead_id` alone → 422). Missing or foreign → 404 `Lead mapping not found`.";

/** An id given as a number or a decimal string. */
export const IdInput = z.union([z.number().int().positive(), z.string().regex(/^\d{1,15}$/).transform(Number)]);

/**
 * The record an inbox action is about: `email_lead_map_id`, or (compat rule C6) the lead's record
 * in `campaign_id` given as `lead_id` + `campaign_id`.
 */
export const RecordTarget = {
  email_lead_map_id: IdInput.optional(),
  lead_id: IdInput.optional(),
  campaign_id: IdInput.optional(),
};

export interface RecordTargetInput {
  email_lead_map_id?: number;
  lead_id?: number;
  campaign_id?: number;
}

export const LEAD_MAPPING_NOT_FOUND = "Lead mapping not found";

/** A field that may arrive under its alias: the canonical name wins; neither → 422 "Required". */
export function given<T>(canonical: T | undefined, alias: T | undefined, path: string): T {
  const value = canonical !== undefined ? canonical : alias;
  if (value === undefined) throw ApiError.validation([{ path, message: "Required" }]);
  return value;
}

/** Resolves the target through the one access rule (another tenant's record looks missing). */
export async function targetRecord(
  db: Database,
  principal: Principal,
  target: RecordTargetInput,
  notFound?: string,
): Promise<CampaignRecordRow> {
  if (target.email_lead_map_id !== undefined) return findCampaignRecord(db, principal, target.email_lead_map_id, notFound);
  if (target.lead_id !== undefined) {
    if (target.campaign_id === undefined) throw ApiError.validation([{ path: "campaign_id", message: "campaign_id is required with lead_id" }]);
    return findRecordOfLead(db, principal, target.campaign_id, target.lead_id, notFound);
  }
  throw ApiError.validation([{ path: "email_lead_map_id", message: "Required" }]);
}
