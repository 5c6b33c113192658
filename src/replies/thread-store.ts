import { and, eq, sql } from "drizzle-orm";
import { emailAccounts } from "../db/schema";
import { campaignMailboxes } from "../platform/access";
import type { Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { statement } from "../platform/sql";

/** The message a reply from the inbox answers, with its record, lead and the record's mailbox. */
interface ThreadAnchor {
  eventId: number;
  /** The Message-ID of the message the stats id names (null when it carried none). */
  messageId: string | null;
  recordId: number;
  step: number;
  leadEmail: string;
  leadFirstName: string | null;
  leadLastName: string | null;
  mailboxId: number | null;
}

/** A SENT or REPLY event of the campaign, by its stats id (the event's id). */
export async function threadAnchor(d1: D1Database, campaignId: number, statsId: number): Promise<ThreadAnchor | null> {
  return statement(
    d1,
    sql`SELECT e.id AS eventId, e.message_id AS messageId, e.campaign_lead_id AS recordId, e.sequence_number AS step, l.email AS leadEmail,
               l.first_name AS leadFirstName, l.last_name AS leadLastName,
               coalesce(cl.email_account_id, e.email_account_id) AS mailboxId
        FROM events e JOIN campaign_leads cl ON cl.id = e.campaign_lead_id JOIN leads l ON l.id = cl.lead_id
        WHERE e.id = ${statsId} AND e.campaign_id = ${campaignId} AND e.type IN ('SENT', 'REPLY')`,
  ).first<ThreadAnchor>();
}

/**
 * The mailbox a reply from the inbox goes out from, if the caller may name it for the thread's campaign
 * (the one tenancy rule): a client key's campaign may send through an account-wide mailbox attached to it.
 */
export async function threadMailbox(db: Database, principal: Principal, campaignId: number, mailboxId: number | null) {
  if (mailboxId === null) return undefined;
  return db.select().from(emailAccounts).where(and(eq(emailAccounts.id, mailboxId), campaignMailboxes(principal, [campaignId]))).get();
}

/** The id of an event by its event_id (the row a reply from the inbox was stored as). */
export async function eventIdOf(d1: D1Database, campaignId: number, eventKey: string): Promise<number | null> {
  const row = await statement(d1, sql`SELECT id FROM events WHERE campaign_id = ${campaignId} AND event_id = ${eventKey}`).first<{ id: number }>();
  return row?.id ?? null;
}
