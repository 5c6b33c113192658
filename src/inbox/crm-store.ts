import { and, asc, eq, inArray, sql } from "drizzle-orm";
import { campaignLeads, campaigns, events, notes, reminders, tasks } from "../db/schema";
import { visibleCampaigns } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";

/** Notes, reminders and revenue on a conversation, and a lead's notes and tasks across its campaigns. */

export function insertNote(db: Database, note: Omit<typeof notes.$inferInsert, "id" | "createdAt">) {
  return db
    .insert(notes)
    .values({ ...note, createdAt: new Date() })
    .returning()
    .get();
}

/** One reminder per record: a new one replaces the old (same id). */
export function upsertReminder(db: Database, reminder: Omit<typeof reminders.$inferInsert, "id" | "createdAt">) {
  return db
    .insert(reminders)
    .values({ ...reminder, createdAt: new Date() })
    .onConflictDoUpdate({
      target: reminders.campaignLeadId,
      set: { remindAt: reminder.remindAt, message: reminder.message, emailStatsId: reminder.emailStatsId ?? null, createdAt: new Date() },
    })
    .returning()
    .get();
}

export function setRevenue(db: Database, recordId: number, cents: number, at: Date) {
  return db.update(campaignLeads).set({ revenueCents: cents, updatedAt: at }).where(eq(campaignLeads.id, recordId));
}

/** The records of a lead in the campaigns the caller may see (a foreign lead has none). */
function recordsOfLead(principal: Principal, leadId: number) {
  return sql`(SELECT cl.id FROM ${campaignLeads} cl JOIN ${campaigns} ON ${campaigns.id} = cl.campaign_id
              WHERE cl.lead_id = ${leadId} AND ${visibleCampaigns(principal)})`;
}

export function notesOfLead(db: Database, principal: Principal, leadId: number) {
  return db
    .select()
    .from(notes)
    .where(and(eq(notes.accountId, principal.accountId), sql`${notes.campaignLeadId} IN ${recordsOfLead(principal, leadId)}`))
    .orderBy(asc(notes.id));
}

export function tasksOfLead(db: Database, principal: Principal, leadId: number) {
  return db
    .select({ task: tasks, leadId: campaignLeads.leadId })
    .from(tasks)
    .innerJoin(campaignLeads, eq(campaignLeads.id, tasks.campaignLeadId))
    .where(and(eq(tasks.accountId, principal.accountId), sql`${tasks.campaignLeadId} IN ${recordsOfLead(principal, leadId)}`))
    .orderBy(asc(tasks.id));
}

/** Whether a stats id is a message (SENT or REPLY) of the record's thread. */
export async function isMessageOf(db: Database, recordId: number, statsId: number): Promise<boolean> {
  const row = await db
    .select({ id: events.id })
    .from(events)
    .where(and(eq(events.id, statsId), eq(events.campaignLeadId, recordId), inArray(events.type, ["SENT", "REPLY"])))
    .get();
  return row !== undefined;
}
