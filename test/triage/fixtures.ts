import { inject, vi } from "vitest";
import { eq } from "drizzle-orm";
import { campaigns } from "../../src/db/schema";
import type { Bindings } from "../../src/platform/env";
import { planIngestion } from "../../src/events/plan";
import { loadIngestContext, storeIngestion } from "../../src/events/store";
import { database } from "../../src/platform/db";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { eventsOf, schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { FAKE_OPENAI_KEY } from "./fake-key";

export const bindings = fileEnv() as unknown as Bindings;

/** The environment with the categoriser configured otherwise (config() parses each fileEnv() object once). */
export function withCategoriser(vars: Record<string, string>): Bindings {
  return { ...bindings, ...vars } as Bindings;
}

export const rulesOnly = () => withCategoriser({ CATEGORISER: "rules" });
export const openAi = (extra: Record<string, string> = {}) =>
  withCategoriser({
    CATEGORISER: "openai",
    CATEGORISER_OPENAI_BASE_URL: inject("fakeOpenAi"),
    CATEGORISER_OPENAI_API_KEY: FAKE_OPENAI_KEY,
    CATEGORISER_MODEL: "gpt-test-mini",
    ...extra,
  });

const categorisations = schema.replyCategorisations;
/** A stored categorisation, under the column names the tests read. */
const categorisedColumns = {
  event_id: categorisations.eventId,
  category_id: categorisations.categoryId,
  category_name: categorisations.categoryName,
  source: categorisations.source,
  rule_id: categorisations.ruleId,
  model: categorisations.model,
  prompt_template_id: categorisations.promptTemplateId,
  prompt_version: categorisations.promptVersion,
  confidence: categorisations.confidence,
  needs_review: categorisations.needsReview,
  reason: categorisations.reason,
};

const categorisation = (eventId: number) => testDb().select(categorisedColumns).from(categorisations).where(eq(categorisations.eventId, eventId)).get();
export type Categorised = NonNullable<Awaited<ReturnType<typeof categorisation>>>;

export async function categorisationOf(eventId: number): Promise<Categorised | null> {
  return (await categorisation(eventId)) ?? null;
}

/** The stored categorisation of a reply, once the queue consumer has written it. */
export function eventually(eventId: number, timeout = 8000): Promise<Categorised> {
  return vi.waitFor(
    async () => {
      const row = await categorisationOf(eventId);
      if (!row) throw new Error(`reply ${eventId} not categorised yet`);
      return row;
    },
    { timeout, interval: 50 },
  );
}

export async function replyIds(campaignId: number): Promise<{ id: number; campaign_lead_id: number; event_id: string }[]> {
  const replies = await eventsOf(campaignId, "REPLY");
  return replies.map((e) => ({ id: e.id, campaign_lead_id: e.campaignLeadId, event_id: e.eventId! }));
}

export async function recordOf(recordId: number) {
  const t = schema.campaignLeads;
  return testDb().select({ id: t.id, state: t.state, category_id: t.categoryId, category_set_at: t.categorySetAt, lead_id: t.leadId }).from(t).where(eq(t.id, recordId)).get();
}

/** An account with one campaign and leads that were sent step 1 (so their replies are credited to a send). */
export async function sentWorld(emails: string[], campaignBody: Record<string, unknown> = {}) {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey, { name: "Triage", ...campaignBody });
  const ids = await addLeads(account.apiKey, campaign, emails);
  await ingestOk(
    account.apiKey,
    campaign,
    emails.map((email, i) => ({ event_id: `sent-${i}`, type: "SENT", lead_email: email, occurred_at: "2026-03-01T09:00:00Z", subject: "Quick question", body: "<p>Hi, a quick question about your outbound.</p>" })),
  );
  return { account, campaign, ids };
}

/**
 * A reply stored through the ingestion path but not handed to the triage queue: tests that run
 * the consumer themselves (with another categoriser configured) use it, so the suite's own
 * consumer does not categorise it first.
 */
export async function storeQuietReply(
  campaignId: number,
  recordId: number,
  reply: { body: string; subject?: string; occurredAt?: string; categoryId?: number | null; isOoo?: boolean; eventId?: string; fromEmail?: string | null },
): Promise<number> {
  const db = database(fileEnv().DB);
  const campaign = (await db.select().from(campaigns).where(eq(campaigns.id, campaignId)).get())!;
  const context = await loadIngestContext(db, eq(campaigns.accountId, campaign.accountId), campaign.accountId, campaignId, {
    recordIds: [recordId],
    emails: [],
    categoryIds: reply.categoryId ? [reply.categoryId] : [],
  });
  const record = context.records[0]!;
  const eventId = reply.eventId ?? `quiet-${crypto.randomUUID()}`;
  const { rows, deliveries } = planIngestion(context, context.campaign!, [
    {
      eventId,
      record,
      incoming: {
        type: "REPLY",
        occurredAt: Date.parse(reply.occurredAt ?? "2026-03-02T10:00:00Z"),
        sequenceNumber: 1,
        emailAccountId: null,
        fromEmail: reply.fromEmail === undefined ? record.leadEmail : reply.fromEmail,
        isOoo: reply.isOoo ?? false,
        categoryId: reply.categoryId ?? null,
      },
      toEmail: "sales@yourdomain.example",
      subject: reply.subject ?? "Re: Quick question",
      body: reply.body,
      messageId: `<${eventId}@lead.example>`,
      linkUrl: null,
    },
  ]);
  await storeIngestion(fileEnv().DB, context.campaign!, rows, deliveries, Date.now());
  return (await eventsOf(campaignId)).find((e) => e.eventId === eventId)!.id;
}

export async function setSettings(apiKey: string, campaignId: number, body: Record<string, unknown>) {
  const { status } = await callJson(`/api/v1/campaigns/${campaignId}/settings`, { method: "POST", apiKey, body });
  if (status !== 200) throw new Error(`settings failed with ${status}`);
}
