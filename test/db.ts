import { and, asc, eq, getTableColumns, inArray, sum } from "drizzle-orm";
import type { SQLiteTable } from "drizzle-orm/sqlite-core";
import { drizzle } from "drizzle-orm/d1";
import * as schema from "../src/db/schema";
import { env, fileEnv } from "./helpers";
import { blockOfId, firstBlockShard, onShard } from "../src/platform/shards";
import { laterBlocks } from "../src/directory/id-ranges";

/**
 * The test database through drizzle and the schema in src/db/schema/: seeders and reads a test uses
 * to set up or look at rows its routes do not show, typed by the tables (a renamed column fails the
 * typecheck, not a test at run time). Raw SQL stays for what drizzle cannot say (triggers, pragmas)
 * and for the migration tests, which build tables the schema no longer has.
 */
export function testDb() {
  return drizzle(fileEnv().DB, { schema });
}

/** The database of the shard an id was made in (a row of an account that may be on another shard than the file's). */
function dbOf(id: number) {
  return drizzle(onShard(env, blockOfId(id)).DB, { schema });
}

/** The environment of the shard an id was made in, also for an id of a block a move handed out (the directory lists those). */
export async function envOfId(id: number): Promise<typeof env> {
  const block = blockOfId(id);
  return onShard(env, firstBlockShard(block) ?? (await laterBlocks(env.DIRECTORY)).get(block)!);
}

export { schema };

/** The account that owns a webhook. */
export async function webhookOwner(webhookId: number): Promise<number> {
  const row = await dbOf(webhookId).select({ accountId: schema.webhooks.accountId }).from(schema.webhooks).where(eq(schema.webhooks.id, webhookId)).get();
  if (!row) throw new Error(`no webhook ${webhookId}`);
  return row.accountId;
}

/** The person (leads row) behind a campaign record. */
export async function personOf(recordId: number): Promise<number> {
  const row = await dbOf(recordId).select({ leadId: schema.campaignLeads.leadId }).from(schema.campaignLeads).where(eq(schema.campaignLeads.id, recordId)).get();
  if (!row) throw new Error(`no record ${recordId}`);
  return row.leadId;
}

/** A completed dry-run replay of a campaign's replies (as a finished replay leaves one, so no chunk runs later). */
export function completedReplay(campaignId: number): Promise<number> {
  return storedReplay(campaignId, "completed");
}

/** A dry-run replay of a campaign's replies, stored in the given state. */
export async function storedReplay(campaignId: number, status: (typeof schema.triageReplays.$inferInsert)["status"]): Promise<number> {
  const campaign = await dbOf(campaignId).select({ accountId: schema.campaigns.accountId }).from(schema.campaigns).where(eq(schema.campaigns.id, campaignId)).get();
  if (!campaign) throw new Error(`no campaign ${campaignId}`);
  const row = await dbOf(campaignId)
    .insert(schema.triageReplays)
    .values({ accountId: campaign.accountId, campaignId, dryRun: true, status, options: {}, total: 0 })
    .returning({ id: schema.triageReplays.id })
    .get();
  return row.id;
}

/** Marks every replay of a campaign as failed. */
export async function replaysFailed(campaignId: number): Promise<void> {
  await testDb().update(schema.triageReplays).set({ status: "failed" }).where(eq(schema.triageReplays.campaignId, campaignId));
}

/** Forgets a reply's categorisation, as if no one had categorised it. */
export async function uncategorised(eventId: number): Promise<void> {
  await testDb().update(schema.events).set({ categoryId: null }).where(eq(schema.events.id, eventId));
  await testDb().delete(schema.replyCategorisations).where(eq(schema.replyCategorisations.eventId, eventId));
}

/** A campaign's prompt templates, by id. */
export function promptTemplatesOf(campaignId: number): Promise<(typeof schema.promptTemplates.$inferSelect)[]> {
  return testDb().select().from(schema.promptTemplates).where(eq(schema.promptTemplates.campaignId, campaignId)).orderBy(asc(schema.promptTemplates.id)).all();
}

/** A webhook's deliveries, by id. */
export function webhookDeliveries(webhookId: number): Promise<(typeof schema.webhookDeliveries.$inferSelect)[]> {
  return testDb().select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.webhookId, webhookId)).orderBy(asc(schema.webhookDeliveries.id)).all();
}

/** Whether a reply event has been categorised (the triage consumer's work is done). */
export async function isCategorised(eventId: number): Promise<boolean> {
  return (await dbOf(eventId).select({ eventId: schema.replyCategorisations.eventId }).from(schema.replyCategorisations).where(eq(schema.replyCategorisations.eventId, eventId)).get()) !== undefined;
}

type Ids = number | readonly number[];
type RecordValues = Partial<typeof schema.campaignLeads.$inferInsert>;
type MailboxValues = Partial<typeof schema.emailAccounts.$inferInsert>;
type CampaignValues = Partial<typeof schema.campaigns.$inferInsert>;
type WebhookValues = Partial<typeof schema.webhooks.$inferInsert>;
type DeliveryValues = Partial<typeof schema.webhookDeliveries.$inferInsert>;
type EventType = (typeof schema.events.$inferSelect)["type"];

function found<T>(row: T | undefined, what: string): T {
  if (row === undefined) throw new Error(`no ${what}`);
  return row;
}

/** Sets columns of campaign records (campaign_leads rows) by id, as a test's world needs them. */
export async function setRecord(ids: Ids, values: RecordValues): Promise<void> {
  const t = schema.campaignLeads;
  await testDb()
    .update(t)
    .set(values)
    .where(typeof ids === "number" ? eq(t.id, ids) : inArray(t.id, [...ids]));
}

/** Sets columns of every record of a campaign. */
export async function setCampaignRecords(campaignId: number, values: RecordValues): Promise<void> {
  await testDb().update(schema.campaignLeads).set(values).where(eq(schema.campaignLeads.campaignId, campaignId));
}

/** A campaign record's row. */
export async function recordRow(id: number): Promise<typeof schema.campaignLeads.$inferSelect> {
  return found(await testDb().select().from(schema.campaignLeads).where(eq(schema.campaignLeads.id, id)).get(), `record ${id}`);
}

/** A campaign's records, by id. */
export function recordsOf(campaignId: number): Promise<(typeof schema.campaignLeads.$inferSelect)[]> {
  return testDb().select().from(schema.campaignLeads).where(eq(schema.campaignLeads.campaignId, campaignId)).orderBy(asc(schema.campaignLeads.id)).all();
}

/** How many records a campaign has. */
export function recordCount(campaignId: number): Promise<number> {
  return testDb().$count(schema.campaignLeads, eq(schema.campaignLeads.campaignId, campaignId));
}

/** Sets columns of a mailbox (email_accounts row). */
export async function setMailbox(id: number, values: MailboxValues): Promise<void> {
  await testDb().update(schema.emailAccounts).set(values).where(eq(schema.emailAccounts.id, id));
}

/** Marks a mailbox's SMTP (and, when asked, IMAP) check as passed, as a passing connection check leaves it. */
export function mailboxConnected(id: number, { imap = false }: { imap?: boolean } = {}): Promise<void> {
  return setMailbox(id, imap ? { isSmtpSuccess: true, isImapSuccess: true } : { isSmtpSuccess: true });
}

/** A mailbox's row. */
export async function mailboxRow(id: number): Promise<typeof schema.emailAccounts.$inferSelect> {
  return found(await testDb().select().from(schema.emailAccounts).where(eq(schema.emailAccounts.id, id)).get(), `mailbox ${id}`);
}

/** How many mailboxes an account has. */
export function mailboxCount(accountId: number): Promise<number> {
  return testDb().$count(schema.emailAccounts, eq(schema.emailAccounts.accountId, accountId));
}

/** Sets columns of a campaign. */
export async function setCampaign(id: number, values: CampaignValues): Promise<void> {
  await testDb().update(schema.campaigns).set(values).where(eq(schema.campaigns.id, id));
}

/** A campaign's row. */
export async function campaignRow(id: number): Promise<typeof schema.campaigns.$inferSelect> {
  return found(await testDb().select().from(schema.campaigns).where(eq(schema.campaigns.id, id)).get(), `campaign ${id}`);
}

/** Sets columns of a webhook. */
export async function setWebhook(id: number, values: WebhookValues): Promise<void> {
  await testDb().update(schema.webhooks).set(values).where(eq(schema.webhooks.id, id));
}

/** A webhook's row. */
export async function webhookRow(id: number): Promise<typeof schema.webhooks.$inferSelect> {
  return found(await testDb().select().from(schema.webhooks).where(eq(schema.webhooks.id, id)).get(), `webhook ${id}`);
}

/** Sets columns of webhook deliveries by id. */
export async function setDelivery(ids: Ids, values: DeliveryValues): Promise<void> {
  const t = schema.webhookDeliveries;
  await testDb()
    .update(t)
    .set(values)
    .where(typeof ids === "number" ? eq(t.id, ids) : inArray(t.id, [...ids]));
}

/** A webhook delivery's row. */
export async function deliveryRow(id: number): Promise<typeof schema.webhookDeliveries.$inferSelect> {
  return found(await testDb().select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.id, id)).get(), `delivery ${id}`);
}

/** A campaign's events (of one type, when given), by id. */
export function eventsOf(campaignId: number, type?: EventType): Promise<(typeof schema.events.$inferSelect)[]> {
  const t = schema.events;
  return testDb()
    .select()
    .from(t)
    .where(and(eq(t.campaignId, campaignId), type === undefined ? undefined : eq(t.type, type)))
    .orderBy(asc(t.id))
    .all();
}

/** How many events a campaign has (of one type, when given). */
export function eventCount(campaignId: number, type?: EventType): Promise<number> {
  const t = schema.events;
  return testDb().$count(t, and(eq(t.campaignId, campaignId), type === undefined ? undefined : eq(t.type, type)));
}

/** The id of a record's first event of a type (its reply, its SENT event). */
export async function recordEventId(recordId: number, type: EventType): Promise<number> {
  const t = schema.events;
  const row = await testDb().select({ id: t.id }).from(t).where(and(eq(t.campaignLeadId, recordId), eq(t.type, type))).orderBy(asc(t.id)).get();
  return found(row, `${type} event of record ${recordId}`).id;
}

/** Sets columns of events by id. */
export async function setEvent(id: number, values: Partial<typeof schema.events.$inferInsert>): Promise<void> {
  await testDb().update(schema.events).set(values).where(eq(schema.events.id, id));
}

/** A campaign's messages (the engine's sends), by id. */
export function messagesOf(campaignId: number): Promise<(typeof schema.messages.$inferSelect)[]> {
  return testDb().select().from(schema.messages).where(eq(schema.messages.campaignId, campaignId)).orderBy(asc(schema.messages.id)).all();
}

/** Sets columns of engine messages by id: a write after the engine's own. */
export async function setMessages(ids: Ids, values: Partial<typeof schema.messages.$inferInsert>): Promise<void> {
  const t = schema.messages;
  await testDb()
    .update(t)
    .set(values)
    .where(typeof ids === "number" ? eq(t.id, ids) : inArray(t.id, [...ids]));
}

/** Adds block-list entries (addresses or domains) to an account. */
export function blockListed(accountId: number, ...entries: string[]): Promise<void> {
  return insertRows(
    schema.blockList,
    entries.map((emailOrDomain) => ({ accountId, emailOrDomain })),
  );
}

/**
 * Inserts rows in statements of as many rows as D1's 100 bound parameters allow (every column is
 * bound, defaults included), all in one batch.
 */
async function insertRows<T extends SQLiteTable>(table: T, rows: T["$inferInsert"][]): Promise<void> {
  const perStatement = Math.max(1, Math.floor(100 / Object.keys(getTableColumns(table)).length));
  const db = testDb();
  const statements = [];
  for (let i = 0; i < rows.length; i += perStatement) statements.push(db.insert(table).values(rows.slice(i, i + perStatement)));
  const [first, ...rest] = statements;
  if (first) await db.batch([first, ...rest]);
}

/** Stores events as given (an ingestion path would refuse them: another account's, or dated ahead). */
export function addEvents(rows: (typeof schema.events.$inferInsert)[]): Promise<void> {
  return insertRows(schema.events, rows);
}

/** Stores campaign records as given, ids included (as a move's copy writes them). */
export function addRecords(rows: (typeof schema.campaignLeads.$inferInsert)[]): Promise<void> {
  return insertRows(schema.campaignLeads, rows);
}

/** Per record of a campaign, the leads its spans name (each once; null: none). */
export async function spanLeads(campaignId: number): Promise<Record<number, (number | null)[]>> {
  const t = schema.eventSpans;
  const rows = await testDb().select({ record: t.campaignLeadId, lead: t.leadId }).from(t).where(eq(t.campaignId, campaignId)).orderBy(asc(t.campaignLeadId)).all();
  const leads: Record<number, (number | null)[]> = {};
  for (const row of rows) if (!(leads[row.record] ??= []).includes(row.lead)) leads[row.record]!.push(row.lead);
  return leads;
}

/** Stores engine messages as given (as a pass that sent them leaves them). */
export function addMessages(rows: (typeof schema.messages.$inferInsert)[]): Promise<void> {
  return insertRows(schema.messages, rows);
}

/** The webhook deliveries a campaign's events made, by id. */
export function campaignDeliveries(campaignId: number): Promise<(typeof schema.webhookDeliveries.$inferSelect)[]> {
  return testDb().select().from(schema.webhookDeliveries).where(eq(schema.webhookDeliveries.campaignId, campaignId)).orderBy(asc(schema.webhookDeliveries.id)).all();
}

export type MessageStatus = (typeof schema.messages.$inferInsert)["status"];

/** A lead's row (the person, across campaigns). */
export async function leadRow(id: number): Promise<typeof schema.leads.$inferSelect> {
  return found(await testDb().select().from(schema.leads).where(eq(schema.leads.id, id)).get(), `lead ${id}`);
}

/** How many events of a type a record has. */
export function recordEventCount(recordId: number, type: EventType): Promise<number> {
  const t = schema.events;
  return testDb().$count(t, and(eq(t.campaignLeadId, recordId), eq(t.type, type)));
}

/** An account's leads (the people), by id. */
export function leadsOf(accountId: number): Promise<(typeof schema.leads.$inferSelect)[]> {
  return testDb().select().from(schema.leads).where(eq(schema.leads.accountId, accountId)).orderBy(asc(schema.leads.id)).all();
}

/** A record's outbound replies (inbox replies and forwards), by id. */
export function outboundRepliesOf(recordId: number): Promise<(typeof schema.outboundReplies.$inferSelect)[]> {
  return testDb().select().from(schema.outboundReplies).where(eq(schema.outboundReplies.campaignLeadId, recordId)).orderBy(asc(schema.outboundReplies.id)).all();
}

/** Sets columns of an outbound reply. */
export async function setOutboundReply(id: number, values: Partial<typeof schema.outboundReplies.$inferInsert>): Promise<void> {
  await testDb().update(schema.outboundReplies).set(values).where(eq(schema.outboundReplies.id, id));
}

/** What an account's and a client's inbox counters hold in all. */
export async function inboxCounterTotal(accountId: number, clientId: number): Promise<number> {
  const [account, client] = await Promise.all([
    testDb().select({ n: sum(schema.inboxCounts.n) }).from(schema.inboxCounts).where(eq(schema.inboxCounts.accountId, accountId)).get(),
    testDb().select({ n: sum(schema.inboxClientCounts.n) }).from(schema.inboxClientCounts).where(eq(schema.inboxClientCounts.clientId, clientId)).get(),
  ]);
  return Number(account?.n ?? 0) + Number(client?.n ?? 0);
}

/** The outbound reply (inbox reply or forward) with a Message-ID. */
export async function outboundReplyRow(messageId: string): Promise<typeof schema.outboundReplies.$inferSelect> {
  return found(await testDb().select().from(schema.outboundReplies).where(eq(schema.outboundReplies.messageId, messageId)).get(), `outbound reply ${messageId}`);
}

/** A campaign's outbound replies, by id. */
export function campaignOutboundReplies(campaignId: number): Promise<(typeof schema.outboundReplies.$inferSelect)[]> {
  return testDb().select().from(schema.outboundReplies).where(eq(schema.outboundReplies.campaignId, campaignId)).orderBy(asc(schema.outboundReplies.id)).all();
}

/** The row id of a campaign's event by the event_id it was reported with. */
export async function eventRowId(campaignId: number, eventId: string): Promise<number> {
  const t = schema.events;
  const row = await testDb().select({ id: t.id }).from(t).where(and(eq(t.campaignId, campaignId), eq(t.eventId, eventId))).get();
  return found(row, `event ${eventId} of campaign ${campaignId}`).id;
}

/** How many tasks a record has. */
export function taskCount(recordId: number): Promise<number> {
  return testDb().$count(schema.tasks, eq(schema.tasks.campaignLeadId, recordId));
}

/** Sets columns of a lead (the person). */
export async function setLead(id: number, values: Partial<typeof schema.leads.$inferInsert>): Promise<void> {
  await testDb().update(schema.leads).set(values).where(eq(schema.leads.id, id));
}

/** An account's lead by address. */
export async function leadByEmail(accountId: number, email: string): Promise<typeof schema.leads.$inferSelect> {
  const row = await testDb().select().from(schema.leads).where(and(eq(schema.leads.accountId, accountId), eq(schema.leads.email, email))).get();
  return found(row, `lead ${email}`);
}

/** Stores manual sends (test emails, replies, forwards, one-off sends) as a mailbox's object records them. */
export function addManualSends(rows: (typeof schema.manualSends.$inferInsert)[]): Promise<void> {
  return insertRows(schema.manualSends, rows);
}

/** An account's tag by name. */
export async function tagByName(accountId: number, name: string): Promise<typeof schema.tags.$inferSelect> {
  const row = await testDb().select().from(schema.tags).where(and(eq(schema.tags.accountId, accountId), eq(schema.tags.name, name))).get();
  return found(row, `tag ${name}`);
}

/** An account's clients, by id. */
export function clientsOf(accountId: number): Promise<(typeof schema.clients.$inferSelect)[]> {
  return testDb().select().from(schema.clients).where(eq(schema.clients.accountId, accountId)).orderBy(asc(schema.clients.id)).all();
}

/** How many webhooks an account has. */
export function webhookCount(accountId: number): Promise<number> {
  return testDb().$count(schema.webhooks, eq(schema.webhooks.accountId, accountId));
}

/** How many records are pinned to a mailbox. */
export function pinnedRecordCount(mailboxId: number): Promise<number> {
  return testDb().$count(schema.campaignLeads, eq(schema.campaignLeads.emailAccountId, mailboxId));
}

/** How many events name a mailbox. */
export function mailboxEventCount(mailboxId: number): Promise<number> {
  return testDb().$count(schema.events, eq(schema.events.emailAccountId, mailboxId));
}

type SessionId = (typeof schema.webSessions.$inferSelect)["id"];

/** A web session's row, if it is still stored. */
export function sessionRow(id: SessionId): Promise<typeof schema.webSessions.$inferSelect | undefined> {
  return testDb().select().from(schema.webSessions).where(eq(schema.webSessions.id, id)).get();
}

/** Sets columns of a web session. */
export async function setSession(id: SessionId, values: Partial<typeof schema.webSessions.$inferInsert>): Promise<void> {
  await testDb().update(schema.webSessions).set(values).where(eq(schema.webSessions.id, id));
}

/** How many campaigns an account has. */
export function campaignCount(accountId: number): Promise<number> {
  return testDb().$count(schema.campaigns, eq(schema.campaigns.accountId, accountId));
}

/** An account's row. */
export async function accountRow(id: number): Promise<typeof schema.accounts.$inferSelect> {
  return found(await testDb().select().from(schema.accounts).where(eq(schema.accounts.id, id)).get(), `account ${id}`);
}

/** Sets columns of an account. */
export async function setAccount(id: number, values: Partial<typeof schema.accounts.$inferInsert>): Promise<void> {
  await testDb().update(schema.accounts).set(values).where(eq(schema.accounts.id, id));
}

/** How many accounts use an email address. */
export function accountsWithEmail(email: string): Promise<number> {
  return testDb().$count(schema.accounts, eq(schema.accounts.email, email));
}

/** An account's own keys (their stored digests). */
export function accountKeysOf(accountId: number): Promise<(typeof schema.accountKeys.$inferSelect)[]> {
  return testDb().select().from(schema.accountKeys).where(eq(schema.accountKeys.accountId, accountId)).orderBy(asc(schema.accountKeys.id)).all();
}

/** Deletes an account's own keys, as another instance's revocation would. */
export async function deleteAccountKeys(accountId: number): Promise<void> {
  await testDb().delete(schema.accountKeys).where(eq(schema.accountKeys.accountId, accountId));
}

/** A client's keys (their stored digests). */
export function clientKeysOf(clientId: number): Promise<(typeof schema.clientKeys.$inferSelect)[]> {
  return testDb().select().from(schema.clientKeys).where(eq(schema.clientKeys.clientId, clientId)).orderBy(asc(schema.clientKeys.id)).all();
}

/** A client key's row, if it is still stored. */
export function clientKeyRow(id: number): Promise<typeof schema.clientKeys.$inferSelect | undefined> {
  return testDb().select().from(schema.clientKeys).where(eq(schema.clientKeys.id, id)).get();
}

/** Deletes a client key, as another instance's revocation would. */
export async function deleteClientKey(id: number): Promise<void> {
  await testDb().delete(schema.clientKeys).where(eq(schema.clientKeys.id, id));
}

/** Every stored key of every account and client. */
export async function everyKeyRow(): Promise<unknown[]> {
  return [...(await testDb().select().from(schema.clientKeys).all()), ...(await testDb().select().from(schema.accountKeys).all())];
}

type OAuthSessionId = (typeof schema.oauthSessions.$inferSelect)["id"];

/** An OAuth consent session's row. */
export async function oauthSessionRow(id: OAuthSessionId): Promise<typeof schema.oauthSessions.$inferSelect> {
  return found(await testDb().select().from(schema.oauthSessions).where(eq(schema.oauthSessions.id, id)).get(), `OAuth session ${id}`);
}

/** Sets columns of an OAuth consent session. */
export async function setOAuthSession(id: OAuthSessionId, values: Partial<typeof schema.oauthSessions.$inferInsert>): Promise<void> {
  await testDb().update(schema.oauthSessions).set(values).where(eq(schema.oauthSessions.id, id));
}

/** How many OAuth consent sessions an account has. */
export function oauthSessionCount(accountId: number): Promise<number> {
  return testDb().$count(schema.oauthSessions, eq(schema.oauthSessions.accountId, accountId));
}

/** An account's OAuth app (its own client id and secret). */
export async function oauthAppOf(accountId: number): Promise<typeof schema.oauthApps.$inferSelect> {
  return found(await testDb().select().from(schema.oauthApps).where(eq(schema.oauthApps.accountId, accountId)).get(), `OAuth app of account ${accountId}`);
}

/** A campaign's subsequences (campaigns whose parent it is), by id. */
export function subsequencesOf(campaignId: number): Promise<(typeof schema.campaigns.$inferSelect)[]> {
  return testDb().select().from(schema.campaigns).where(eq(schema.campaigns.parentCampaignId, campaignId)).orderBy(asc(schema.campaigns.id)).all();
}

/** A campaign's sequence steps, deleted ones too, by id. */
export function sequenceStepsOf(campaignId: number): Promise<(typeof schema.sequenceSteps.$inferSelect)[]> {
  return testDb().select().from(schema.sequenceSteps).where(eq(schema.sequenceSteps.campaignId, campaignId)).orderBy(asc(schema.sequenceSteps.id)).all();
}

/** The people (leads rows) a campaign's records stand for, by record id. */
export async function campaignPeople(campaignId: number): Promise<(typeof schema.leads.$inferSelect)[]> {
  const rows = await testDb()
    .select({ lead: schema.leads })
    .from(schema.campaignLeads)
    .innerJoin(schema.leads, eq(schema.leads.id, schema.campaignLeads.leadId))
    .where(eq(schema.campaignLeads.campaignId, campaignId))
    .orderBy(asc(schema.campaignLeads.id))
    .all();
  return rows.map((row) => row.lead);
}

/** Deletes events by id (as if they had never been reported). */
export async function deleteEvents(ids: readonly number[]): Promise<void> {
  if (ids.length) await testDb().delete(schema.events).where(inArray(schema.events.id, [...ids]));
}

/** Deletes a record straight from the table (its events stay, as in a deletion through the API). */
export async function deleteRecord(id: number): Promise<void> {
  await testDb().delete(schema.campaignLeads).where(eq(schema.campaignLeads.id, id));
}

/** A lead list's row. */
export async function leadListRow(id: number): Promise<typeof schema.leadLists.$inferSelect> {
  return found(await testDb().select().from(schema.leadLists).where(eq(schema.leadLists.id, id)).get(), `lead list ${id}`);
}

/** How many leads a list holds. */
export function listMemberCount(listId: number): Promise<number> {
  return testDb().$count(schema.leadListMembers, eq(schema.leadListMembers.listId, listId));
}

/** A CSV import's row. */
export async function importRow(id: number): Promise<typeof schema.leadListImports.$inferSelect> {
  return found(await testDb().select().from(schema.leadListImports).where(eq(schema.leadListImports.id, id)).get(), `import ${id}`);
}

/** Sets columns of a CSV import. */
export async function setImport(id: number, values: Partial<typeof schema.leadListImports.$inferInsert>): Promise<void> {
  await testDb().update(schema.leadListImports).set(values).where(eq(schema.leadListImports.id, id));
}

/** Stores a CSV import as the upload route would queue it. */
export async function addImport(values: typeof schema.leadListImports.$inferInsert): Promise<number> {
  return (await testDb().insert(schema.leadListImports).values(values).returning({ id: schema.leadListImports.id }).get()).id;
}

/** The kinds of webhook deliveries a campaign's events made, with how many of each. */
export async function deliveryKinds(where: { campaignId: number } | { webhookId: number }): Promise<Record<string, number>> {
  const t = schema.webhookDeliveries;
  const rows = await testDb()
    .select({ kind: t.eventType })
    .from(t)
    .where("campaignId" in where ? eq(t.campaignId, where.campaignId) : eq(t.webhookId, where.webhookId))
    .all();
  const kinds: Record<string, number> = {};
  for (const { kind } of rows) kinds[kind] = (kinds[kind] ?? 0) + 1;
  return kinds;
}
