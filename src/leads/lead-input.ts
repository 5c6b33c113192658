import { z } from "@hono/zod-openapi";
import type { LeadRow } from "../platform/access";
import { VERIFICATION_STATUSES } from "../db/schema";

const optionalText = z.string().max(500).nullish();

/** One lead as uploads and list imports take it (section 2's add-lead object; `email` required). */
export const LeadInput = z.object({
  email: z.string().max(320),
  first_name: optionalText,
  last_name: optionalText,
  company_name: optionalText,
  phone_number: optionalText,
  website: optionalText,
  location: optionalText,
  linkedin_profile: optionalText,
  company_url: optionalText,
  custom_fields: z.record(z.string(), z.unknown()).nullish(),
});

/** A lead's stored fields as answers show them (the listing's `Lead`, a list's members). */
export const leadOutputFields = {
  id: z.number().int(),
  email: z.string(),
  first_name: z.string().nullable(),
  last_name: z.string().nullable(),
  company_name: z.string().nullable(),
  phone_number: z.string().nullable(),
  website: z.string().nullable(),
  location: z.string().nullable(),
  linkedin_profile: z.string().nullable(),
  company_url: z.string().nullable(),
  custom_fields: z.record(z.string(), z.unknown()).nullable(),
  verification_status: z.enum(VERIFICATION_STATUSES).nullable().openapi({ description: "Extension (CONTRACT 22): the latest email verification; null = never checked" }),
  verification_reason: z.string().nullable().openapi({ description: "The verification's reason code (e.g. `mx_ok`, `no_domain`, `hard_bounce`)" }),
  verified_at: z.string().nullable(),
};

/** A lead's own fields as every lead output gives them (leadOutputFields' members). */
export function leadOutput(lead: LeadRow) {
  return {
    id: lead.id,
    email: lead.email,
    first_name: lead.firstName,
    last_name: lead.lastName,
    company_name: lead.companyName,
    phone_number: lead.phoneNumber,
    website: lead.website,
    location: lead.location,
    linkedin_profile: lead.linkedinProfile,
    company_url: lead.companyUrl,
    custom_fields: lead.customFields ?? null,
    verification_status: lead.verificationStatus,
    verification_reason: lead.verificationReason,
    verified_at: lead.verifiedAt ? lead.verifiedAt.toISOString() : null,
  };
}
