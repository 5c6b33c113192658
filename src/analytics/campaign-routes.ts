import { createRoute, z } from "@hono/zod-openapi";
import { withBodies } from "../platform/bodies";
import { database } from "../platform/db";
import { iso, parseInstant } from "../platform/time";
import { isTimeZone, parseCalendarDate } from "../platform/zoned-time";
import { findCampaign } from "../platform/access";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, queryCount, queryId, operationWords, type OperationWords } from "../platform/openapi";
import { rawBatch } from "../platform/sql";
import { PERSON_STEP } from "../events/rules";
import { CampaignParams } from "../campaigns/schemas";
import { settingsOf } from "../schedule/settings";
import { campaignCounts } from "./store";
import { LIFETIME, type Window } from "./counters";
import { dateWindow, groupBy } from "./rules";
import {
  leadStatisticsPage,
  lifetimeExtras,
  mailboxesQuery,
  mailboxFiguresQuery,
  sequenceFigures,
  statisticsPage,
  windowExtras,
} from "./campaign-store";
import { CAMPAIGN_ANALYTICS } from "./routes";

/** Wider windows than section 3's 30 days (one client asks from 2020): CONTRACT 13.3, cap inferred. */
const MAX_FAMILY_RANGE_DAYS = 366;
const FAMILY_RANGE_TOO_WIDE = "Invalid start_date & end_date range. Date difference should be max of 366 days.";

const calendarDate = z
  .string()
  .refine((value) => parseCalendarDate(value) !== null, "Must be a calendar date as YYYY-MM-DD")
  .openapi({ example: "2026-11-01" });
const timeZone = z.string().refine(isTimeZone, "Must be an IANA time zone name").default("UTC").openapi({ example: "America/New_York" });
const count = z.string().regex(/^\d+$/);
const nullableTime = z.string().nullable();

const DatedQuery = z.object({ start_date: calendarDate, end_date: calendarDate, time_zone: timeZone });

function familyWindow(query: { start_date: string; end_date: string; time_zone: string }): Window {
  return dateWindow(query.start_date, query.end_date, query.time_zone, MAX_FAMILY_RANGE_DAYS, FAMILY_RANGE_TOO_WIDE);
}

const Tag = z.object({ id: z.number().int(), name: z.string(), color: z.string(), tag_id: z.number().int(), tag_name: z.string(), tag_color: z.string() });

const LifetimeAnalytics = z
  .object({
    id: z.number().int(),
    user_id: z.number().int(),
    created_at: z.string(),
    status: z.string(),
    name: z.string(),
    client_id: z.number().int().nullable(),
    client_name: z.string().nullable(),
    client_email: z.string().nullable(),
    client_company_name: z.null(),
    parent_campaign_id: z.null(),
    send_as_plain_text: z.boolean(),
    sent_count: count,
    unique_sent_count: count,
    open_count: count,
    unique_open_count: count,
    click_count: count,
    unique_click_count: count,
    reply_count: count,
    total_reply_count: count,
    non_ooo_reply_count: count,
    block_count: count,
    bounce_count: count,
    unsubscribed_count: count,
    total_count: count,
    drafted_count: count,
    sequence_count: count,
    tags: z.array(Tag),
    campaign_lead_stats: z.object({
      total: z.number().int(),
      blocked: z.number().int(),
      stopped: z.number().int(),
      completed: z.number().int(),
      inprogress: z.number().int(),
      notStarted: z.number().int(),
      paused: z.number().int(),
      interested: z.number().int(),
      revenue: z.number(),
    }),
  })
  .openapi("CampaignLifetimeAnalytics");

const TopLevelAnalytics = z
  .object({
    id: z.number().int(),
    name: z.string(),
    status: z.string(),
    start_date: z.string(),
    end_date: z.string(),
    total_count: count,
    sent_count: count,
    unique_sent_count: count,
    skipped_count: count,
    open_count: count,
    unique_open_count: count,
    click_count: count,
    unique_click_count: count,
    reply_count: count,
    positive_reply_count: count,
    bounce_count: count,
    failed_count: count,
    stopped_count: count,
    unsubscribed_count: count,
  })
  .openapi("CampaignTopLevelAnalytics");

const StatisticsQuery = z.object({
  offset: queryCount(0).default(0),
  limit: queryCount(1, 1000).default(100),
  email_sequence_number: queryCount(1, 20).optional(),
  email_status: z.enum(["opened", "clicked", "replied", "unsubscribed", "bounced"]).optional(),
  sent_time_start_date: z.string().optional().openapi({ example: "2026-03-01 00:00:00" }),
  sent_time_end_date: z.string().optional().openapi({ example: "2026-03-31 23:59:59" }),
});

const StatisticsRow = z.object({
  stats_id: z.string(),
  lead_id: z.number().int(),
  lead_name: z.string(),
  lead_email: z.string(),
  lead_category: z.string().nullable(),
  sequence_number: z.number().int(),
  email_campaign_seq_id: z.number().int().nullable(),
  seq_variant_id: z.number().int().nullable(),
  email_subject: z.string().nullable(),
  email_message: z.string().nullable(),
  sent_time: z.string(),
  open_time: nullableTime,
  click_time: nullableTime,
  reply_time: nullableTime,
  open_count: z.number().int(),
  click_count: z.number().int(),
  is_unsubscribed: z.boolean(),
  is_bounced: z.boolean(),
  ignore_reply: z.boolean(),
});

const Statistics = z
  .object({ total_stats: count, data: z.array(StatisticsRow), offset: z.number().int(), limit: z.number().int() })
  .openapi("CampaignStatistics");

const LeadsStatisticsQuery = z.object({
  offset: queryCount(0).default(0),
  limit: queryCount(1, 100).default(100),
  event_time_gt: z.string().optional().openapi({ example: "2026-03-01" }),
});

const LeadsStatistics = z
  .object({
    data: z.array(
      z.object({
        lead_id: z.number().int(),
        email_lead_map_id: z.number().int(),
        lead_email: z.string(),
        lead_name: z.string(),
        to: z.string(),
        status: z.string(),
        lead_category_id: z.number().int().nullable(),
        sent_count: z.number().int(),
        open_count: z.number().int(),
        click_count: z.number().int(),
        reply_count: z.number().int(),
        last_event_time: nullableTime,
        history: z.array(
          z.object({ type: z.string(), time: z.string(), email_seq_number: z.number().int(), subject: z.string().nullable(), email_body: z.string().nullable() }),
        ),
      }),
    ),
    hasMore: z.boolean(),
    skip: z.number().int(),
    offset: z.number().int(),
    limit: z.number().int(),
  })
  .openapi("CampaignLeadsStatistics");

const MailboxStatisticsQuery = z.object({
  client_id: queryId().optional(),
  offset: queryCount(0).default(0),
  limit: queryCount(1, 20).default(20),
  start_date: calendarDate.optional(),
  end_date: calendarDate.optional(),
  time_zone: timeZone,
});

const MailboxStatistics = z
  .object({
    ok: z.literal(true),
    data: z.array(
      z.object({
        email_account_id: z.number().int(),
        from_email: z.string().nullable(),
        from_name: z.string().nullable(),
        sent_count: z.number().int(),
        unique_sent_count: z.number().int(),
        open_count: z.number().int(),
        unique_open_count: z.number().int(),
        click_count: z.number().int(),
        unique_click_count: z.number().int(),
        reply_count: z.number().int(),
        bounce_count: z.number().int(),
        unsubscribed_count: z.number().int(),
      }),
    ),
  })
  .openapi("CampaignMailboxStatistics");

const VariantFigures = z.object({
  seq_variant_id: z.number().int(),
  variant_label: z.string().nullable(),
  sent_count: z.number().int(),
  open_count: z.number().int(),
  click_count: z.number().int(),
  reply_count: z.number().int(),
  positive_reply_count: z.number().int(),
});

const SequenceAnalytics = z
  .object({
    ok: z.literal(true),
    data: z.array(
      z.object({
        email_campaign_seq_id: z.number().int().nullable(),
        seq_number: z.number().int(),
        sent_count: z.number().int(),
        skipped_count: z.number().int(),
        open_count: z.number().int(),
        click_count: z.number().int(),
        reply_count: z.number().int(),
        positive_reply_count: z.number().int(),
        bounce_count: z.number().int(),
        unsubscribed_count: z.number().int(),
        failed_count: z.number().int(),
        stopped_count: z.number().int(),
        variants: z.array(VariantFigures),
      }),
    ),
  })
  .openapi("CampaignSequenceAnalytics");

function campaignRoute<Q extends z.ZodObject, R extends z.ZodType>(path: string, words: OperationWords, query: Q, response: R) {
  return createRoute({
    method: "get",
    path: `/api/v1/campaigns/{campaign_id}/${path}`,
    ...operationWords(words),
    tags: ["Analytics"],
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, query },
    responses: { 200: json(response, words.summary), ...errorResponses(400, 401, 404, 422, 429) },
  });
}

const routes = {
  lifetime: campaignRoute("analytics", {
    operationId: "getCampaignAnalytics",
    summary: "Lifetime analytics of a campaign (counts as strings)",
    description: "Lifetime counts of the campaign as decimal strings, with `campaign_lead_stats` (records by state, interested, revenue) as numbers. " + CAMPAIGN_ANALYTICS,
  }, z.object({}), LifetimeAnalytics),
  statistics: campaignRoute("statistics", {
    operationId: "getCampaignStatistics",
    summary: "One row per sent email, with its opens, clicks and reply",
    description: "One row per sent email with its open, click and reply times, paged by `offset`/`limit` (1–1000); narrowed by " +
      "`email_sequence_number`, `email_status` and send-time dates. A reply is credited to the latest send before it only. " + CAMPAIGN_ANALYTICS,
  }, StatisticsQuery, Statistics),
  topLevel: campaignRoute("top-level-analytics-by-date", {
    operationId: "getCampaignTopLevelAnalyticsByDate",
    summary: "A campaign's figures for a date range of at most 366 days",
    description: "The campaign's figures for `start_date`..`end_date` (required, ≤ 366 days) in `time_zone`, counts as strings. " + CAMPAIGN_ANALYTICS,
  }, DatedQuery, TopLevelAnalytics),
  leadsStatistics: campaignRoute("leads-statistics", {
    operationId: "getCampaignLeadsStatistics",
    summary: "Per campaign record: counts and event history",
    description: "Per record: sent, open, click and reply counts and its event history; `event_time_gt` keeps records with a later event. Paged (`limit` 1–100). " + CAMPAIGN_ANALYTICS,
  }, LeadsStatisticsQuery, LeadsStatistics),
  leadStatistics: campaignRoute("lead-statistics", {
    operationId: "getCampaignLeadStatistics",
    summary: "Same as leads-statistics (the name one client uses)",
    description: "The same as `leads-statistics` (the name one client uses). " + CAMPAIGN_ANALYTICS,
  }, LeadsStatisticsQuery, LeadsStatistics),
  mailboxStatistics: campaignRoute("mailbox-statistics", {
    operationId: "getCampaignMailboxStatistics",
    summary: "Per sending mailbox: its sends and the outcomes credited to them",
    description: "Per sending mailbox: its sends and the outcomes credited to them; `start_date` and `end_date` both or neither (one alone → 400). " + CAMPAIGN_ANALYTICS,
  }, MailboxStatisticsQuery, MailboxStatistics),
  sequenceAnalytics: campaignRoute("sequence-analytics", {
    operationId: "getCampaignSequenceAnalytics",
    summary: "Per sequence step (and A/B variant): the window's figures",
    description: "Per sequence step and A/B variant: sends, opens, clicks, replies and bounces in the window. " + CAMPAIGN_ANALYTICS,
  }, DatedQuery, SequenceAnalytics),
};

/** A lead's display name: first and last name, or its address when it has neither. */
function leadName(row: Record<string, unknown>): string {
  return [row.first_name, row.last_name].filter((part) => typeof part === "string" && part !== "").join(" ") || String(row.email ?? row.lead_email);
}

const strings = (counts: Record<string, number>) => Object.fromEntries(Object.entries(counts).map(([key, value]) => [key, String(value)]));
const timeOrNull = (value: unknown) => (value === null || value === undefined ? null : iso(Number(value)));

/** Any ISO 8601 date-time (the docs write `YYYY-MM-DD HH:MM:SS`: UTC), or a date (its midnight, UTC); otherwise a 400. */
function instantParam(value: string | undefined, name: string): number | undefined {
  if (value === undefined) return undefined;
  const parsed = parseInstant(value) ?? parseCalendarDate(value);
  if (parsed === null) throw ApiError.badRequest(`${name} must be an ISO 8601 date or date-time`);
  return parsed;
}

export const campaignAnalyticsRoutes = createRouter();

campaignAnalyticsRoutes.openapi(routes.lifetime, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  const [counts, extras] = await Promise.all([
    campaignCounts(c.env.DB, campaign.id, LIFETIME.start, LIFETIME.end),
    lifetimeExtras(c.env.DB, campaign),
  ]);
  const lifetime = [
    "sent_count", "unique_sent_count", "open_count", "unique_open_count", "click_count", "unique_click_count", "reply_count",
    "total_reply_count", "non_ooo_reply_count", "block_count", "bounce_count", "unsubscribed_count", "total_count", "drafted_count",
  ] as const;
  const figures = Object.fromEntries(lifetime.map((field) => [field, counts[field]]));
  return c.json(
    {
      id: campaign.id,
      user_id: campaign.accountId,
      created_at: iso(campaign.createdAt),
      status: campaign.status,
      name: campaign.name,
      client_id: campaign.clientId,
      client_name: extras.client?.name ?? null,
      client_email: extras.client?.email ?? null,
      client_company_name: null,
      parent_campaign_id: null,
      send_as_plain_text: settingsOf(campaign.settings).sendAsPlainText,
      ...strings(figures),
      sequence_count: String(extras.sequenceCount),
      tags: extras.tags.map((tag) => ({ ...tag, tag_id: tag.id, tag_name: tag.name, tag_color: tag.color })),
      campaign_lead_stats: extras.leadStats,
    } as z.infer<typeof LifetimeAnalytics>,
    200,
  );
});

campaignAnalyticsRoutes.openapi(routes.topLevel, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  const query = c.req.valid("query");
  const window = familyWindow(query);
  const [counts, extras] = await Promise.all([
    campaignCounts(c.env.DB, campaign.id, window.start, window.end),
    windowExtras(c.env.DB, campaign.id, window),
  ]);
  return c.json(
    {
      id: campaign.id,
      name: campaign.name,
      status: campaign.status,
      start_date: query.start_date,
      end_date: query.end_date,
      ...strings({
        total_count: counts.total_count,
        sent_count: counts.sent_count,
        unique_sent_count: counts.unique_sent_count,
        skipped_count: 0,
        open_count: counts.open_count,
        unique_open_count: counts.unique_open_count,
        click_count: counts.click_count,
        unique_click_count: counts.unique_click_count,
        reply_count: counts.reply_count,
        positive_reply_count: extras.positive_reply_count,
        bounce_count: counts.bounce_count,
        failed_count: extras.failed_count,
        stopped_count: extras.stopped_count,
        unsubscribed_count: counts.unsubscribed_count,
      }),
    } as z.infer<typeof TopLevelAnalytics>,
    200,
  );
});

campaignAnalyticsRoutes.openapi(routes.statistics, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  const query = c.req.valid("query");
  const { total, rows } = await statisticsPage(
    c.env.DB,
    campaign.id,
    {
      sequenceNumber: query.email_sequence_number,
      emailStatus: query.email_status,
      sentFrom: instantParam(query.sent_time_start_date, "sent_time_start_date"),
      sentTo: instantParam(query.sent_time_end_date, "sent_time_end_date"),
    },
    { offset: query.offset, limit: query.limit },
  );
  await withBodies(c.env.BODIES, campaign.accountId, rows, ["body"]);
  return c.json(
    {
      total_stats: String(total),
      offset: query.offset,
      limit: query.limit,
      data: rows.map((row) => ({
        stats_id: String(row.id),
        lead_id: Number(row.lead_id),
        lead_name: leadName(row),
        lead_email: String(row.lead_email),
        lead_category: (row.lead_category as string | null) ?? null,
        sequence_number: Number(row.sequence_number),
        email_campaign_seq_id: row.step_id === null ? null : Number(row.step_id),
        seq_variant_id: row.variant_id === null ? null : Number(row.variant_id),
        email_subject: (row.subject as string | null) ?? null,
        email_message: (row.body as string | null) ?? null,
        sent_time: iso(Number(row.occurred_at)),
        open_time: timeOrNull(row.open_time),
        click_time: timeOrNull(row.click_time),
        reply_time: timeOrNull(row.reply_time),
        open_count: Number(row.open_count),
        click_count: Number(row.click_count),
        is_unsubscribed: Number(row.is_unsubscribed) === 1,
        is_bounced: Number(row.is_bounced) === 1,
        ignore_reply: Number(row.ignore_reply) === 1,
      })),
    },
    200,
  );
});

for (const route of [routes.leadsStatistics, routes.leadStatistics]) {
campaignAnalyticsRoutes.openapi(route, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  const query = c.req.valid("query");
  const after = instantParam(query.event_time_gt, "event_time_gt");
  const { records, history, hasMore } = await leadStatisticsPage(c.env.DB, campaign.id, after, { offset: query.offset, limit: query.limit });
  await withBodies(c.env.BODIES, campaign.accountId, history, ["body"]);
  const byRecord = groupBy(history, (row) => Number(row.campaign_lead_id));
  return c.json(
    {
      data: records.map((record) => {
        const events = byRecord.get(Number(record.id)) ?? [];
        // A person's inbox reply shows in the history but is no email of the campaign (PERSON_STEP).
        const counted = (event: (typeof events)[number]) =>
          !(event.type === "REPLY" && Number(event.ignored) === 1) && !(event.type === "SENT" && Number(event.sequence_number) === PERSON_STEP);
        const countOf = (type: string) => events.filter((event) => event.type === type && counted(event)).length;
        return {
          lead_id: Number(record.lead_id),
          email_lead_map_id: Number(record.id),
          lead_email: String(record.email),
          lead_name: leadName(record),
          to: String(record.email),
          status: String(record.state),
          lead_category_id: record.category_id === null ? null : Number(record.category_id),
          sent_count: countOf("SENT"),
          open_count: countOf("OPEN"),
          click_count: countOf("CLICK"),
          reply_count: countOf("REPLY"),
          last_event_time: events.length ? iso(Math.max(...events.map((event) => Number(event.occurred_at)))) : null,
          history: events.map((event) => ({
            type: String(event.type),
            time: iso(Number(event.occurred_at)),
            email_seq_number: Number(event.sequence_number),
            subject: (event.subject as string | null) ?? null,
            email_body: (event.body as string | null) ?? null,
          })),
        };
      }),
      hasMore,
      skip: query.offset,
      offset: query.offset,
      limit: query.limit,
    },
    200,
  );
});
}

campaignAnalyticsRoutes.openapi(routes.mailboxStatistics, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  const query = c.req.valid("query");
  if ((query.start_date === undefined) !== (query.end_date === undefined)) {
    throw ApiError.badRequest("start_date and end_date must be given together");
  }
  const window =
    query.start_date !== undefined && query.end_date !== undefined
      ? familyWindow({ start_date: query.start_date, end_date: query.end_date, time_zone: query.time_zone })
      : null;
  const [figures] = await rawBatch(c.env.DB, [mailboxFiguresQuery([campaign.id], window)]);
  const page = figures!.sort((a, b) => Number(a.mailbox_id) - Number(b.mailbox_id)).slice(query.offset, query.offset + query.limit);
  const [mailboxes] = await rawBatch(c.env.DB, [mailboxesQuery(c.get("principal"), [campaign.id], page.map((row) => Number(row.mailbox_id)))]);
  const byId = new Map(mailboxes!.map((row) => [Number(row.id), row]));
  return c.json(
    {
      ok: true as const,
      data: page.map((row) => {
        const mailbox = byId.get(Number(row.mailbox_id));
        return {
          email_account_id: Number(row.mailbox_id),
          from_email: (mailbox?.from_email ?? mailbox?.sent_from ?? null) as string | null,
          from_name: (mailbox?.from_name ?? null) as string | null,
          sent_count: Number(row.sent),
          unique_sent_count: Number(row.unique_sent),
          open_count: Number(row.opened),
          unique_open_count: Number(row.unique_opened),
          click_count: Number(row.clicked),
          unique_click_count: Number(row.unique_clicked),
          reply_count: Number(row.replied),
          bounce_count: Number(row.bounced),
          unsubscribed_count: Number(row.unsubscribed),
        };
      }),
    },
    200,
  );
});

campaignAnalyticsRoutes.openapi(routes.sequenceAnalytics, async (c) => {
  const campaign = await findCampaign(database(c.env.DB), c.get("principal"), c.req.valid("param").campaign_id);
  const window = familyWindow(c.req.valid("query"));
  const { stepRows, figureRows, positiveRows, failedRows, stoppedRows, variantRows } = await sequenceFigures(c.env.DB, campaign.id, window);
  // Failures, stops and events can name a step removed since (the engine fails a message whose step is gone), so each adds its step.
  const seqNumbers = [
    ...new Set([
      ...stepRows.map((row) => Number(row.seq_number)),
      ...figureRows.map((row) => Number(row.sequence_number)),
      ...[...failedRows, ...stoppedRows].map((row) => Number(row.seq)),
    ]),
  ].sort((a, b) => a - b);
  const figure = (seq: number, type: string, field: "total" | "counted" = "total") =>
    Number(figureRows.find((row) => Number(row.sequence_number) === seq && row.type === type)?.[field] ?? 0);
  const stepIds = new Map(stepRows.map((row) => [Number(row.seq_number), Number(row.id)]));
  const bySeq = (rows: Record<string, unknown>[], seq: number) => Number(rows.find((row) => Number(row.seq) === seq)?.n ?? 0);
  return c.json(
    {
      ok: true as const,
      data: seqNumbers.map((seq) => {
        const variants = groupBy(
          variantRows.filter((row) => Number(row.seq) === seq),
          (row) => Number(row.variant_id),
        );
        return {
          email_campaign_seq_id: stepIds.get(seq) ?? null,
          seq_number: seq,
          sent_count: figure(seq, "SENT"),
          skipped_count: 0,
          open_count: figure(seq, "OPEN"),
          click_count: figure(seq, "CLICK"),
          reply_count: figure(seq, "REPLY", "counted"),
          positive_reply_count: bySeq(positiveRows, seq),
          bounce_count: figure(seq, "BOUNCE"),
          unsubscribed_count: figure(seq, "UNSUBSCRIBE"),
          failed_count: bySeq(failedRows, seq),
          stopped_count: bySeq(stoppedRows, seq),
          variants: [...variants.entries()].map(([variantId, rows]) => {
            const of = (type: string, field: "total" | "counted" | "positive" = "total") => Number(rows.find((row) => row.type === type)?.[field] ?? 0);
            return {
              seq_variant_id: variantId,
              variant_label: (rows[0]?.label as string | null) ?? null,
              sent_count: of("SENT"),
              open_count: of("OPEN"),
              click_count: of("CLICK"),
              reply_count: of("REPLY", "counted"),
              positive_reply_count: of("REPLY", "positive"),
            };
          }),
        };
      }),
    },
    200,
  );
});
