import { eq } from "drizzle-orm";
import { drizzle } from "drizzle-orm/d1";
import * as schema from "../src/db/schema";
import { env } from "./helpers";

/**
 * The test database through drizzle and the schema in src/db/schema/: seeders and reads a test uses
 * to set up or look at rows its routes do not show, typed by the tables (a renamed column fails the
 * typecheck, not a test at run time). Raw SQL stays for what drizzle cannot say (triggers, pragmas)
 * and for the migration tests, which build tables the schema no longer has.
 */
export function testDb() {
  return drizzle(env.DB, { schema });
}

export { schema };

/** The account that owns a webhook. */
export async function webhookOwner(webhookId: number): Promise<number> {
  const row = await testDb().select({ accountId: schema.webhooks.accountId }).from(schema.webhooks).where(eq(schema.webhooks.id, webhookId)).get();
  if (!row) throw new Error(`no webhook ${webhookId}`);
  return row.accountId;
}

/** The person (leads row) behind a campaign record. */
export async function personOf(recordId: number): Promise<number> {
  const row = await testDb().select({ leadId: schema.campaignLeads.leadId }).from(schema.campaignLeads).where(eq(schema.campaignLeads.id, recordId)).get();
  if (!row) throw new Error(`no record ${recordId}`);
  return row.leadId;
}

/** A completed dry-run replay of a campaign's replies (as a finished replay leaves one, so no chunk runs later). */
export async function completedReplay(campaignId: number): Promise<number> {
  const campaign = await testDb().select({ accountId: schema.campaigns.accountId }).from(schema.campaigns).where(eq(schema.campaigns.id, campaignId)).get();
  if (!campaign) throw new Error(`no campaign ${campaignId}`);
  const row = await testDb()
    .insert(schema.triageReplays)
    .values({ accountId: campaign.accountId, campaignId, dryRun: true, status: "completed", options: {}, total: 0 })
    .returning({ id: schema.triageReplays.id })
    .get();
  return row.id;
}

/** Whether a reply event has been categorised (the triage consumer's work is done). */
export async function isCategorised(eventId: number): Promise<boolean> {
  return (await testDb().select({ eventId: schema.replyCategorisations.eventId }).from(schema.replyCategorisations).where(eq(schema.replyCategorisations.eventId, eventId)).get()) !== undefined;
}
