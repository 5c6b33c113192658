import { inject, vi } from "vitest";
import { eq } from "drizzle-orm";
import { campaigns } from "../../src/db/schema";
import type { Bindings } from "../../src/platform/env";
import { planIngestion } from "../../src/events/plan";
import { loadIngestContext, storeIngestion } from "../../src/events/store";
import { database } from "../../src/platform/db";
import { addLeads, createCampaign, ingestOk } from "../campaigns/fixtures";
import { callJson, env, provisionAccount } from "../helpers";
import { FAKE_OPENAI_KEY } from "./fake-key";

export const bindings = env as unknown as Bindings;

/** The environment with the categoriser configured otherwise (config() parses each env object once). */
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

export interface Categorised {
  event_id: number;
  category_id: number | null;
  category_name: string | null;
  source: string;
  rule_id: string | null;
  model: string | null;
  prompt_template_id: number | null;
  prompt_version: string | null;
  confidence: number | null;
  needs_review: number;
  reason: string | null;
}

export async function categorisationOf(eventId: number): Promise<Categorised | null> {
  return env.DB.prepare("SELECT * FROM reply_categorisations WHERE event_id = ?").bind(eventId).first<Categorised>();
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
  const rows = await env.DB.prepare("SELECT id, campaign_lead_id, event_id FROM events WHERE campaign_id = ? AND type = 'REPLY' ORDER BY id").bind(campaignId).all<{
    id: number;
    campaign_lead_id: number;
    event_id: string;
  }>();
  return rows.results;
}

export async function recordOf(recordId: number) {
  return env.DB.prepare("SELECT id, state, category_id, category_set_at, lead_id FROM campaign_leads WHERE id = ?")
    .bind(recordId)
    .first<{ id: number; state: string; category_id: number | null; category_set_at: number | null; lead_id: number }>();
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
  const db = database(env.DB);
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
  await storeIngestion(env.DB, context.campaign!, rows, deliveries, Date.now());
  const row = await env.DB.prepare("SELECT id FROM events WHERE campaign_id = ? AND event_id = ?").bind(campaignId, eventId).first<{ id: number }>();
  return row!.id;
}

export async function setSettings(apiKey: string, campaignId: number, body: Record<string, unknown>) {
  const { status } = await callJson(`/api/v1/campaigns/${campaignId}/settings`, { method: "POST", apiKey, body });
  if (status !== 200) throw new Error(`settings failed with ${status}`);
}
