import { and, asc, eq, inArray, lt } from "drizzle-orm";
import { leads, messages } from "../db/schema";
import type { Database } from "../platform/db";

/** The lead's own fields, as a campaign email renders them, and whether the person opted out. */
export async function leadFields(db: Database, leadId: number) {
  const row = await db
    .select({
      email: leads.email,
      first_name: leads.firstName,
      last_name: leads.lastName,
      company_name: leads.companyName,
      phone_number: leads.phoneNumber,
      website: leads.website,
      location: leads.location,
      linkedin_profile: leads.linkedinProfile,
      company_url: leads.companyUrl,
      custom_fields: leads.customFields,
      isUnsubscribed: leads.isUnsubscribed,
    })
    .from(leads)
    .where(eq(leads.id, leadId))
    .get();
  if (!row) return null;
  const { isUnsubscribed, ...fields } = row;
  return { fields, isUnsubscribed };
}

/** The emails already sent to a record before `step`, oldest first: a follow-up threads on them. */
export async function earlierSends(db: Database, recordId: number, step: number) {
  return db
    .select({ messageId: messages.messageId, subject: messages.subject })
    .from(messages)
    .where(and(eq(messages.campaignLeadId, recordId), lt(messages.step, step), inArray(messages.status, ["sent", "unconfirmed"])))
    .orderBy(asc(messages.step));
}
