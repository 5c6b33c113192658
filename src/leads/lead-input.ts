import { z } from "@hono/zod-openapi";

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
