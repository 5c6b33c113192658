import { z } from "@hono/zod-openapi";
import type { LeadRow } from "../platform/access";
import { EMAIL_PROVIDERS, VERIFICATION_STATUSES } from "../db/schema";
import { espDomainType } from "../esp/rules";

const optionalText = z.string().max(500).nullish();

/** A lead's zone and its aliases (CONTRACT 23.1): an unknown name is stored as null and counted, never refused. */
export const timezoneInput = {
  timezone: z.string().nullish().openapi({ description: "IANA time zone name (Europe/Paris); unknown names are stored as null and counted in invalid_timezone_count" }),
  time_zone: z.string().nullish().openapi({ description: "Alias of timezone" }),
  lead_timezone: z.string().nullish().openapi({ description: "Alias of timezone" }),
  schedule_timezone: z.string().nullish().openapi({ description: "Alias of timezone" }),
  tz: z.string().nullish().openapi({ description: "Alias of timezone" }),
};

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
  ...timezoneInput,
});

/** A lead's provider (CONTRACT 23.3), learned from its domain's MX in the background. */
export const providerOutputFields = {
  email_provider: z.enum(EMAIL_PROVIDERS).nullable().openapi({ description: "The recipient's email provider from its domain's MX (CONTRACT 23.3); null until learned in the background, or when DNS could not tell" }),
  esp_domain_type: z.union([z.literal(0), z.literal(1), z.literal(2)]).openapi({ description: "The hosted provider code: 1 google, 2 microsoft, 0 other or unknown" }),
};

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
  timezone: z.string().nullable().openapi({ description: "The lead's IANA time zone, or null" }),
  verification_status: z.enum(VERIFICATION_STATUSES).nullable().openapi({ description: "Extension (CONTRACT 22): the latest email verification; null = never checked" }),
  verification_reason: z.string().nullable().openapi({ description: "The verification's reason code (e.g. `mx_ok`, `no_domain`, `hard_bounce`)" }),
  verified_at: z.string().nullable(),
  ...providerOutputFields,
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
    timezone: lead.timezone,
    verification_status: lead.verificationStatus,
    verification_reason: lead.verificationReason,
    verified_at: lead.verifiedAt ? lead.verifiedAt.toISOString() : null,
    email_provider: lead.emailProvider,
    esp_domain_type: espDomainType(lead.emailProvider),
  };
}
