import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { database } from "../platform/db";
import { isTimeZone, parseCalendarDate } from "../platform/zoned-time";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json, queryBoolean, queryCount, operationWords, type OperationWords } from "../platform/openapi";
import { rawBatch } from "../platform/sql";
import { categoriesOf } from "../leads/store";
import { mailboxesQuery, mailboxFiguresQuery } from "./campaign-store";
import { distinctQuery, readDistinct, type Window } from "./counters";
import {
  campaignFigures,
  dailyTotals,
  firstReplyDelaysQuery,
  followUpQuery,
  mailboxTagsQuery,
  positiveReplyQuarters,
  repliesByCategoryQuery,
  selectedCampaigns,
  sendQuarterCounts,
  sumFigures,
  teamBoardQuery,
  visibleClients,
  visibleMailboxes,
  type Figures,
} from "./global-store";
import { sentimentOf } from "../categories/rules";
import { dateWindow, groupBy, localDays, percent, REPLY_TIME_BUCKETS, replyTimeBucket } from "./rules";

/** CONTRACT 13.7: a year at most (inferred cap). */
const MAX_GLOBAL_RANGE_DAYS = 366;
const GLOBAL_RANGE_TOO_WIDE = "Invalid start_date & end_date range. Date difference should be max of 366 days.";

const calendarDate = z
  .string()
  .refine((value) => parseCalendarDate(value) !== null, "Must be a calendar date as YYYY-MM-DD")
  .openapi({ example: "2026-11-01" });
const zoneName = z.string().refine(isTimeZone, "Must be an IANA time zone name").optional();
const idList = z
  .string()
  .regex(/^\s*\d+\s*(,\s*\d+\s*)*$/, "Must be comma-separated ids")
  .optional()
  .openapi({ description: "Comma-separated ids (the parameter may also repeat)", example: "1,2" });

const common = {
  timezone: zoneName.openapi({ description: "IANA zone of the local days (alias time_zone); default UTC" }),
  time_zone: zoneName,
  client_ids: idList,
  campaign_ids: idList,
  full_data: z.string().optional().openapi({ description: "Ignored: answers are always full" }),
  is_agency: z.string().optional().openapi({ description: "Ignored" }),
};
const paging = { limit: queryCount(1, 100).default(100), offset: queryCount(0).default(0) };

const Dated = z.object({ start_date: calendarDate, end_date: calendarDate, ...common });
const DatedPaged = Dated.extend(paging);
const Undated = z.object({ start_date: calendarDate.optional(), end_date: calendarDate.optional(), ...common });
const ClientStatsQuery = DatedPaged.extend({ filter: z.string().max(200).optional().openapi({ description: "Client-name substring" }) });
const MailboxHealthQuery = DatedPaged.extend({ is_bounced: queryBoolean.optional().openapi({ description: "true keeps mailboxes with bounces" }) });

type AnyQuery = z.infer<typeof Undated> & Partial<z.infer<typeof DatedPaged>>;

const rate = z.string().openapi({ example: "12.5%" });
const overall = {
  sent: z.number().int(),
  opened: z.number().int(),
  replied: z.number().int(),
  bounced: z.number().int(),
};
const DayRow = z.object({ date: z.string(), ...overall });
const PositiveDayRow = z.object({ date: z.string(), positive_replied: z.number().int() });

/** What every account-wide analytics route says about its window (the reference's words). */
const ANALYTICS_WINDOW =
  "Window: `start_date`..`end_date` (`YYYY-MM-DD`) as local days in `time_zone` (or `timezone`; IANA, default UTC), DST-correct; " +
  "`campaign_ids`/`client_ids` narrow it to some campaigns or clients. A client key sees its client's campaigns only.";

function envelope<S extends z.ZodType>(key: string, schema: S, name: string) {
  return z.object({ ok: z.literal(true), data: z.object({ [key]: schema }) }).openapi(name);
}

function globalRoute<Q extends z.ZodObject, R extends z.ZodType>(path: string, words: OperationWords, query: Q, response: R) {
  return createRoute({
    method: "get",
    path: `/api/v1/analytics/${path}`,
    ...operationWords(words),
    tags: ["Analytics"],
    security: API_KEY_SECURITY,
    request: { query },
    responses: { 200: json(response, words.summary), ...errorResponses(400, 401, 422, 429) },
  });
}

const OverallStats = z.object({
  ...overall,
  unique_lead_count: z.number().int(),
  unique_open_count: z.number().int(),
  positive_replied: z.number().int(),
  open_rate: rate,
  reply_rate: rate,
  positive_reply_rate: rate,
  bounce_rate: rate,
});
const overallResponse = envelope("overall_stats", OverallStats, "AnalyticsOverallStats");

const routes = {
  overallV2: globalRoute("overall-stats-v2", {
    operationId: "getOverallStats",
    summary: "Sent, opened, replied, bounced and rates over the caller's campaigns",
    description: "Sent, opened, replied, bounced, positive replies and their rates (`\"12.5%\"`) over the caller's campaigns. " + ANALYTICS_WINDOW,
  }, Dated, overallResponse),
  overview: globalRoute("overview", {
    operationId: "getOverallStatsOverview",
    summary: "Alias of overall-stats-v2",
    description: "Alias of `overall-stats-v2`. " + ANALYTICS_WINDOW,
  }, Dated, overallResponse),
  dayWise: globalRoute("day-wise-overall-stats", {
    operationId: "getDayWiseOverallStats",
    summary: "Per local day: sent, opened, replied, bounced",
    description: "Per local day: sent, opened, replied, bounced. " + ANALYTICS_WINDOW,
  }, Dated, envelope("day_wise_stats", z.array(DayRow), "AnalyticsDayWise")),
  dayWiseBySent: globalRoute(
    "day-wise-overall-stats-by-sent-time",
    {
      operationId: "getDayWiseOverallStatsBySentTime",
      summary: "Per local day of the send: its sends and the opens, replies and bounces that answer them",
      description: "Per local day of the send: its sends and the opens, replies and bounces that answer them. " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope("day_wise_stats", z.array(DayRow), "AnalyticsDayWiseBySentTime"),
  ),
  positiveDayWise: globalRoute(
    "day-wise-positive-reply-stats",
    {
      operationId: "getDayWisePositiveReplyStats",
      summary: "Per local day: replies from records in a positive category",
      description: "Per local day: replies from records in a positive category (Interested, Meeting Request, Information Request). " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope("day_wise_stats", z.array(PositiveDayRow), "AnalyticsPositiveDayWise"),
  ),
  positiveDayWiseBySent: globalRoute(
    "day-wise-positive-reply-stats-by-sent-time",
    {
      operationId: "getDayWisePositiveReplyStatsBySentTime",
      summary: "Per local day of the send: the positive replies that answer it",
      description: "Per local day of the send: the positive replies that answer it. " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope("day_wise_stats", z.array(PositiveDayRow), "AnalyticsPositiveDayWiseBySentTime"),
  ),
  campaignList: globalRoute(
    "campaign/list",
    {
      operationId: "listAnalyticsCampaigns",
      summary: "The caller's campaigns",
      description: "The caller's campaigns as `{id, name}`, for pickers.",
    },
    Undated.extend(paging),
    envelope("campaign_list", z.array(z.object({ id: z.number().int(), name: z.string() })), "AnalyticsCampaignList"),
  ),
  campaignOverall: globalRoute(
    "campaign/overall-stats",
    {
      operationId: "getCampaignWisePerformance",
      summary: "Per campaign: the window's figures and rates",
      description: "Per campaign: the window's figures and rates. " + ANALYTICS_WINDOW,
    },
    DatedPaged,
    envelope(
      "campaign_wise_performance",
      z.array(z.object({ id: z.number().int(), campaign_name: z.string(), ...OverallStats.omit({ bounce_rate: true }).shape, bounce_rate: rate })),
      "AnalyticsCampaignPerformance",
    ),
  ),
  campaignResponse: globalRoute(
    "campaign/response-stats",
    {
      operationId: "getCampaignResponseStats",
      summary: "Per campaign: replies by sentiment of the replying record's category",
      description: "Per campaign: replies by sentiment of the replying record's category (uncategorised counts as neutral). " + ANALYTICS_WINDOW,
    },
    DatedPaged,
    envelope(
      "campaign_wise_response_stats",
      z.array(
        z.object({
          campaign_id: z.number().int(),
          campaign_name: z.string(),
          positive_reply: z.number().int(),
          neutral_reply: z.number().int(),
          negative_reply: z.number().int(),
        }),
      ),
      "AnalyticsCampaignResponses",
    ),
  ),
  campaignStatus: globalRoute(
    "campaign/status-stats",
    {
      operationId: "getCampaignStatusStats",
      summary: "How many campaigns are in each status",
      description: "How many of the caller's campaigns are in each status present.",
    },
    Undated,
    envelope("campaign_status_stats", z.array(z.object({ status: z.string(), count: z.number().int() })), "AnalyticsCampaignStatuses"),
  ),
  followUp: globalRoute(
    "campaign/follow-up-reply-rate",
    {
      operationId: "getFollowUpReplyRate",
      summary: "Replies to steps 2 and later per 100 of their sends (1 decimal)",
      description: "Replies to steps 2 and later per 100 of their sends, one decimal. " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope("followup_reply_rate", z.number(), "AnalyticsFollowUpReplyRate"),
  ),
  leadToReply: globalRoute(
    "campaign/lead-to-reply-time",
    {
      operationId: "getLeadToReplyTime",
      summary: "Records whose first reply is in the window, by time from first send to first reply",
      description: "Records whose first reply falls in the window, bucketed by time from first send to first reply (0-1h … 7d+). " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope("lead_to_reply_time", z.array(z.object({ time_range: z.string(), count: z.number().int() })), "AnalyticsLeadToReplyTime"),
  ),
  leadsForFirstReply: globalRoute(
    "campaign/leads-take-for-first-reply",
    {
      operationId: "getLeadsTakeForFirstReply",
      summary: "Leads sent to per lead that replied, rounded",
      description: "Leads sent to per lead that replied, rounded. " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope("leads_take_for_first_reply", z.number().int(), "AnalyticsLeadsForFirstReply"),
  ),
  clientList: globalRoute(
    "client/list",
    {
      operationId: "listAnalyticsClients",
      summary: "The caller's clients",
      description: "The caller's clients as `{id, name}`.",
    },
    Undated.extend(paging),
    envelope("client_list", z.array(z.object({ id: z.number().int(), name: z.string() })), "AnalyticsClientList"),
  ),
  clientMonthly: globalRoute(
    "client/month-wise-count",
    {
      operationId: "getClientMonthWiseCount",
      summary: "Clients created per month",
      description: "Clients created per month (`YYYY-MM`).",
    },
    Undated,
    envelope("monthly_stats", z.array(z.object({ month: z.string(), count: z.number().int() })), "AnalyticsClientMonthly"),
  ),
  clientOverall: globalRoute(
    "client/overall-stats",
    {
      operationId: "getClientWisePerformance",
      summary: "Per client: its campaigns' figures in the window",
      description: "Per client: its campaigns' figures in the window and `client_health` (100 % minus the bounce rate); `filter` matches client names. " + ANALYTICS_WINDOW,
    },
    ClientStatsQuery,
    envelope(
      "client_wise_performance",
      z.array(
        z.object({
          client_id: z.number().int(),
          client_name: z.string(),
          total_campaigns_count: z.number().int(),
          campaign_stats: z.object({
            sent: z.number().int(),
            opened: z.number().int(),
            replied: z.number().int(),
            positive_replied: z.number().int(),
            client_health: rate,
            open_rate: rate,
            reply_rate: rate,
            positive_reply_rate: rate,
            unique_open_count: z.number().int(),
            unique_lead_count: z.number().int(),
          }),
        }),
      ),
      "AnalyticsClientPerformance",
    ),
  ),
  leadOverall: globalRoute(
    "lead/overall-stats",
    {
      operationId: "getLeadOverallStats",
      summary: "Leads emailed in the window: new (step 1 in it) and follow-up",
      description: "Leads emailed in the window: `new` (got step 1 in it) and `follow_up`, with percentages. " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope(
      "lead_stats",
      z.object({
        count: z.object({ total: z.number().int(), new: z.number().int(), follow_up: z.number().int() }),
        percentage: z.object({ new: rate, follow_up: rate }),
      }),
      "AnalyticsLeadStats",
    ),
  ),
  leadCategories: globalRoute(
    "lead/category-wise-response",
    {
      operationId: "getLeadCategoryWiseResponse",
      summary: "Records that replied in the window, by their current category",
      description: "Records that replied in the window, by their current category, with percentages. " + ANALYTICS_WINDOW,
    },
    Dated,
    envelope(
      "lead_responses_by_category",
      z.array(z.object({ category: z.string(), total_response: z.number().int(), percentage: rate })),
      "AnalyticsResponsesByCategory",
    ),
  ),
  mailboxNames: globalRoute(
    "mailbox/name-wise-health-metrics",
    {
      operationId: "getMailboxHealthMetrics",
      summary: "Per sending mailbox: sent, opened, replied, bounced",
      description: "Per sending mailbox: sent, opened, replied, bounced; `is_bounced=true` keeps mailboxes with bounces. " + ANALYTICS_WINDOW,
    },
    MailboxHealthQuery,
    envelope("email_health_metrics", z.array(z.object({ email_account: z.string(), ...overall })), "AnalyticsMailboxHealth"),
  ),
  mailboxDomains: globalRoute(
    "mailbox/domain-wise-health-metrics",
    {
      operationId: "getDomainHealthMetrics",
      summary: "Per sending domain: sent, opened, replied, bounced",
      description: "Per sending domain: sent, opened, replied, bounced. " + ANALYTICS_WINDOW,
    },
    DatedPaged,
    envelope("domain_health_metrics", z.array(z.object({ domain: z.string(), ...overall })), "AnalyticsDomainHealth"),
  ),
  mailboxProviders: globalRoute(
    "mailbox/provider-wise-overall-performance",
    {
      operationId: "getProviderWisePerformance",
      summary: "Per mailbox provider (type), overall and by mailbox tag",
      description: "Per mailbox provider (the mailbox `type`), overall and by mailbox tag. " + ANALYTICS_WINDOW,
    },
    DatedPaged,
    envelope(
      "email_providers_performance_overview",
      z.object({
        overall: z.array(z.object({ provider: z.string(), sent: z.number().int(), opened: z.number().int(), replied: z.number().int() })),
        tag_wise: z.array(z.object({ tag: z.string(), provider: z.string(), sent: z.number().int(), opened: z.number().int() })),
      }),
      "AnalyticsProviderPerformance",
    ),
  ),
  mailboxOverall: globalRoute(
    "mailbox/overall-stats",
    {
      operationId: "getMailboxOverallStats",
      summary: "The caller's mailboxes: connected, in use, disconnected, enabled without warmup",
      description: "The caller's current mailboxes: connected, in use by a campaign, disconnected, enabled without warmup.",
    },
    Undated,
    envelope(
      "overall_mailbox_stats",
      z.object({
        total_connected: z.number().int(),
        in_use: z.number().int(),
        disconnected: z.number().int(),
        enabled_without_warmup: z.number().int(),
      }),
      "AnalyticsMailboxOverview",
    ),
  ),
  teamBoard: globalRoute(
    "team-board/overall-stats",
    {
      operationId: "getTeamBoardStats",
      summary: "Per team member of the campaigns' records: leads, replies and rates",
      description: "Per campaign team member: leads, campaigns, replies, positive replies, rates and average reply time. " + ANALYTICS_WINDOW,
    },
    DatedPaged,
    envelope(
      "team_board_stats",
      z.array(
        z.object({
          id: z.number().int(),
          name: z.null(),
          profile_pic_url: z.null(),
          lead_count: z.number().int(),
          campaign_count: z.number().int(),
          reply_count: z.number().int(),
          positive_reply_count: z.number().int(),
          reply_rate: rate,
          positive_reply_rate: rate,
          average_reply_time: z.number().nullable().openapi({ description: "Mean hours from first send to first reply (inferred unit)" }),
          unique_open_count: z.number().int(),
        }),
      ),
      "AnalyticsTeamBoard",
    ),
  ),
};

type Ctx = Context<AppEnv>;

/** Comma-separated ids from every occurrence of the parameter; null when absent. */
function idsParam(c: Ctx, name: string): number[] | null {
  const values = c.req.queries(name);
  if (!values || values.length === 0) return null;
  const pieces = values.flatMap((value) => value.split(",")).map((piece) => piece.trim()).filter((piece) => piece !== "");
  if (pieces.some((piece) => !/^\d+$/.test(piece))) throw ApiError.badRequest(`${name} must be comma-separated ids`);
  return pieces.map(Number);
}

function zoneOf(query: AnyQuery): string {
  return query.timezone ?? query.time_zone ?? "UTC";
}

interface Scope {
  campaigns: { id: number; name: string; status: string; clientId: number | null }[];
  window: Window;
  zone: string;
}

/** The caller's selected campaigns and, for dated routes, the window (validated: end >= start, at most a year). */
async function scope(c: Ctx, query: AnyQuery): Promise<Scope> {
  const zone = zoneOf(query);
  let window: Window = { start: 0, end: 0 };
  if (query.start_date !== undefined || query.end_date !== undefined) {
    if (query.start_date === undefined || query.end_date === undefined) throw ApiError.badRequest("start_date and end_date must be given together");
    window = dateWindow(query.start_date, query.end_date, zone, MAX_GLOBAL_RANGE_DAYS, GLOBAL_RANGE_TOO_WIDE);
  }
  const campaigns = await selectedCampaigns(database(c.env.DB), c.get("principal"), {
    clientIds: idsParam(c, "client_ids"),
    campaignIds: idsParam(c, "campaign_ids"),
  });
  return { campaigns, window, zone };
}

function rates(figures: Figures) {
  return {
    open_rate: percent(figures.opened, figures.sent),
    reply_rate: percent(figures.replied, figures.sent),
    positive_reply_rate: percent(figures.positive_replied, figures.sent),
    bounce_rate: percent(figures.bounced, figures.sent),
  };
}

function overallOf(figures: Figures) {
  return {
    sent: figures.sent,
    opened: figures.opened,
    replied: figures.replied,
    bounced: figures.bounced,
    unique_lead_count: figures.unique_lead_count,
    unique_open_count: figures.unique_open_count,
    positive_replied: figures.positive_replied,
    ...rates(figures),
  };
}

function page<T>(items: T[], query: AnyQuery): T[] {
  const offset = query.offset ?? 0;
  return items.slice(offset, offset + (query.limit ?? 100));
}

/** The index of the local day holding `instant`, or -1 (days are ascending and contiguous). */
function dayIndex(days: { window: Window }[], instant: number): number {
  let [low, high] = [0, days.length - 1];
  while (low <= high) {
    const middle = (low + high) >> 1;
    const { start, end } = days[middle]!.window;
    if (instant < start) high = middle - 1;
    else if (instant >= end) low = middle + 1;
    else return middle;
  }
  return -1;
}

function okData<T>(c: Ctx, key: string, value: T) {
  return c.json({ ok: true as const, data: { [key]: value } }, 200);
}

export const globalAnalyticsRoutes = createRouter();
const r = globalAnalyticsRoutes;

for (const route of [routes.overallV2, routes.overview]) {
  r.openapi(route, async (c) => {
    const { campaigns, window } = await scope(c, c.req.valid("query"));
    const figures = await campaignFigures(c.env.DB, campaigns.map((row) => row.id), window);
    return okData(c, "overall_stats", overallOf(sumFigures(figures.values())));
  });
}

r.openapi(routes.dayWise, async (c) => {
  const query = c.req.valid("query");
  const { campaigns, zone } = await scope(c, query);
  const days = localDays(query.start_date, query.end_date, zone);
  const rows = await dailyTotals(c.env.DB, campaigns.map((row) => row.id), days.map((day) => day.window));
  const out = days.map((day) => ({ date: day.date, sent: 0, opened: 0, replied: 0, bounced: 0 }));
  const field = { SENT: "sent", OPEN: "opened", REPLY: "replied", BOUNCE: "bounced" } as const;
  for (const row of rows) {
    const name = field[row.type as keyof typeof field];
    if (name) out[Number(row.day)]![name] += Number(row.type === "REPLY" ? row.counted : row.total);
  }
  return okData(c, "day_wise_stats", out);
});

r.openapi(routes.dayWiseBySent, async (c) => {
  const query = c.req.valid("query");
  const { campaigns, window, zone } = await scope(c, query);
  const days = localDays(query.start_date, query.end_date, zone);
  const rows = await sendQuarterCounts(c.env.DB, campaigns.map((row) => row.id), window);
  const out = days.map((day) => ({ date: day.date, sent: 0, opened: 0, replied: 0, bounced: 0 }));
  const field = { SENT: "sent", OPEN: "opened", REPLY: "replied", BOUNCE: "bounced" } as const;
  for (const row of rows) {
    const index = dayIndex(days, row.quarter);
    const name = field[row.type as keyof typeof field];
    if (index >= 0 && name) out[index]![name] += row.n;
  }
  return okData(c, "day_wise_stats", out);
});

for (const [route, bySend] of [
  [routes.positiveDayWise, false],
  [routes.positiveDayWiseBySent, true],
] as const) {
  r.openapi(route, async (c) => {
    const query = c.req.valid("query");
    const { campaigns, window, zone } = await scope(c, query);
    const days = localDays(query.start_date, query.end_date, zone);
    const rows = await positiveReplyQuarters(c.env.DB, campaigns.map((row) => row.id), window, bySend);
    const out = days.map((day) => ({ date: day.date, positive_replied: 0 }));
    for (const row of rows) {
      const index = dayIndex(days, row.quarter);
      if (index >= 0 && row.type === "REPLY") out[index]!.positive_replied += row.n;
    }
    return okData(c, "day_wise_stats", out);
  });
}

r.openapi(routes.campaignList, async (c) => {
  const query = c.req.valid("query");
  const { campaigns } = await scope(c, query);
  return okData(c, "campaign_list", page(campaigns, query).map((row) => ({ id: row.id, name: row.name })));
});

r.openapi(routes.campaignOverall, async (c) => {
  const query = c.req.valid("query");
  const { campaigns, window } = await scope(c, query);
  const shown = page(campaigns, query);
  const figures = await campaignFigures(c.env.DB, shown.map((row) => row.id), window);
  return okData(
    c,
    "campaign_wise_performance",
    shown.map((row) => ({ id: row.id, campaign_name: row.name, ...overallOf(figures.get(row.id)!) })),
  );
});

r.openapi(routes.campaignResponse, async (c) => {
  const query = c.req.valid("query");
  const { campaigns, window } = await scope(c, query);
  const shown = page(campaigns, query);
  const [rows] = await rawBatch(c.env.DB, [repliesByCategoryQuery(shown.map((row) => row.id), window)]);
  const byCampaign = groupBy(rows!, (row) => Number(row.campaign_id));
  return okData(
    c,
    "campaign_wise_response_stats",
    shown.map((campaign) => {
      const counts = { positive: 0, neutral: 0, negative: 0 };
      for (const row of byCampaign.get(campaign.id) ?? []) {
        counts[sentimentOf(row.category_id === null ? null : Number(row.category_id))] += Number(row.replies);
      }
      return {
        campaign_id: campaign.id,
        campaign_name: campaign.name,
        positive_reply: counts.positive,
        neutral_reply: counts.neutral,
        negative_reply: counts.negative,
      };
    }),
  );
});

r.openapi(routes.campaignStatus, async (c) => {
  const { campaigns } = await scope(c, c.req.valid("query"));
  const byStatus = groupBy(campaigns, (row) => row.status);
  return okData(
    c,
    "campaign_status_stats",
    [...byStatus.entries()].map(([status, rows]) => ({ status, count: rows.length })),
  );
});

r.openapi(routes.followUp, async (c) => {
  const { campaigns, window } = await scope(c, c.req.valid("query"));
  const [rows] = await rawBatch(c.env.DB, [followUpQuery(campaigns.map((row) => row.id), window)]);
  const { sent, replied } = { sent: Number(rows![0]!.sent), replied: Number(rows![0]!.replied) };
  return okData(c, "followup_reply_rate", sent === 0 ? 0 : Math.round((replied / sent) * 1000) / 10);
});

r.openapi(routes.leadToReply, async (c) => {
  const { campaigns, window } = await scope(c, c.req.valid("query"));
  const [rows] = await rawBatch(c.env.DB, [firstReplyDelaysQuery(campaigns.map((row) => row.id), window)]);
  const counts = new Map(REPLY_TIME_BUCKETS.map((bucket) => [bucket.time_range, 0]));
  for (const row of rows!) {
    const bucket = replyTimeBucket(Number(row.delay));
    counts.set(bucket, counts.get(bucket)! + 1);
  }
  return okData(c, "lead_to_reply_time", [...counts.entries()].map(([time_range, count]) => ({ time_range, count })));
});

r.openapi(routes.leadsForFirstReply, async (c) => {
  const { campaigns, window } = await scope(c, c.req.valid("query"));
  const ids = campaigns.map((row) => row.id);
  const [rows] = await rawBatch(c.env.DB, [distinctQuery(ids, window, ["SENT", "REPLY"])]);
  const distinct = [...readDistinct(rows!, ids).values()];
  const sentTo = distinct.reduce((sum, row) => sum + row.SENT, 0);
  const replied = distinct.reduce((sum, row) => sum + row.REPLY, 0);
  return okData(c, "leads_take_for_first_reply", replied === 0 ? 0 : Math.round(sentTo / replied));
});

r.openapi(routes.clientList, async (c) => {
  const query = c.req.valid("query");
  const rows = await visibleClients(database(c.env.DB), c.get("principal"));
  return okData(c, "client_list", page(rows, query).map((row) => ({ id: row.id, name: row.name })));
});

r.openapi(routes.clientMonthly, async (c) => {
  const query = c.req.valid("query");
  const { window } = await scope(c, query);
  const dated = query.start_date !== undefined;
  const rows = (await visibleClients(database(c.env.DB), c.get("principal"))).filter(
    (row) => !dated || (row.createdAt.getTime() >= window.start && row.createdAt.getTime() < window.end),
  );
  const months = groupBy(rows, (row) => row.createdAt.toISOString().slice(0, 7));
  return okData(
    c,
    "monthly_stats",
    [...months.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([month, clients]) => ({ month, count: clients.length })),
  );
});

r.openapi(routes.clientOverall, async (c) => {
  const query = c.req.valid("query");
  const { campaigns, window } = await scope(c, query);
  const clients = page(await visibleClients(database(c.env.DB), c.get("principal"), query.filter), query);
  const byClient = groupBy(campaigns.filter((row) => row.clientId !== null), (row) => row.clientId!);
  const ids = clients.flatMap((client) => (byClient.get(client.id) ?? []).map((row) => row.id));
  const figures = await campaignFigures(c.env.DB, ids, window);
  return okData(
    c,
    "client_wise_performance",
    clients.map((client) => {
      const own = byClient.get(client.id) ?? [];
      const sum = sumFigures(own.map((row) => figures.get(row.id)!));
      const rate = rates(sum);
      return {
        client_id: client.id,
        client_name: client.name,
        total_campaigns_count: own.length,
        campaign_stats: {
          sent: sum.sent,
          opened: sum.opened,
          replied: sum.replied,
          positive_replied: sum.positive_replied,
          client_health: sum.sent === 0 ? "100%" : percent(sum.sent - sum.bounced, sum.sent),
          open_rate: rate.open_rate,
          reply_rate: rate.reply_rate,
          positive_reply_rate: rate.positive_reply_rate,
          unique_open_count: sum.unique_open_count,
          unique_lead_count: sum.unique_lead_count,
        },
      };
    }),
  );
});

r.openapi(routes.leadOverall, async (c) => {
  const { campaigns, window } = await scope(c, c.req.valid("query"));
  const sum = sumFigures((await campaignFigures(c.env.DB, campaigns.map((row) => row.id), window)).values());
  const total = sum.unique_lead_count;
  const fresh = sum.new_leads;
  return okData(c, "lead_stats", {
    count: { total, new: fresh, follow_up: total - fresh },
    percentage: { new: percent(fresh, total), follow_up: percent(total - fresh, total) },
  });
});

r.openapi(routes.leadCategories, async (c) => {
  const { campaigns, window } = await scope(c, c.req.valid("query"));
  const principal = c.get("principal");
  const [[rows], categories] = await Promise.all([
    rawBatch(c.env.DB, [repliesByCategoryQuery(campaigns.map((row) => row.id), window)]),
    categoriesOf(database(c.env.DB), principal.accountId),
  ]);
  const names = new Map(categories.map((row) => [row.id, row.name]));
  const byCategory = new Map<string, number>();
  for (const row of rows!) {
    const name = row.category_id === null ? "Uncategorized" : (names.get(Number(row.category_id)) ?? "Uncategorized");
    byCategory.set(name, (byCategory.get(name) ?? 0) + Number(row.records));
  }
  const total = [...byCategory.values()].reduce((sum, n) => sum + n, 0);
  return okData(
    c,
    "lead_responses_by_category",
    [...byCategory.entries()].map(([category, n]) => ({ category, total_response: n, percentage: percent(n, total) })),
  );
});

/** The window's mailbox figures over the selected campaigns, with each mailbox's row. */
async function mailboxRows(c: Ctx, query: AnyQuery) {
  const { campaigns, window } = await scope(c, query);
  const [figures] = await rawBatch(c.env.DB, [mailboxFiguresQuery(campaigns.map((row) => row.id), window, { uniques: false })]);
  const [mailboxes] = await rawBatch(c.env.DB, [mailboxesQuery(figures!.map((row) => Number(row.mailbox_id)))]);
  const byId = new Map(mailboxes!.map((row) => [Number(row.id), row]));
  return figures!
    .sort((a, b) => Number(a.mailbox_id) - Number(b.mailbox_id))
    .map((row) => {
      const mailbox = byId.get(Number(row.mailbox_id));
      return {
        id: Number(row.mailbox_id),
        email: String(mailbox?.from_email ?? row.from_email ?? ""),
        provider: String(mailbox?.type ?? "SMTP"),
        sent: Number(row.sent),
        opened: Number(row.opened),
        replied: Number(row.replied),
        bounced: Number(row.bounced),
      };
    });
}

r.openapi(routes.mailboxNames, async (c) => {
  const query = c.req.valid("query");
  const rows = (await mailboxRows(c, query)).filter((row) => !query.is_bounced || row.bounced > 0);
  return okData(
    c,
    "email_health_metrics",
    page(rows, query).map((row) => ({ email_account: row.email, sent: row.sent, opened: row.opened, replied: row.replied, bounced: row.bounced })),
  );
});

r.openapi(routes.mailboxDomains, async (c) => {
  const query = c.req.valid("query");
  const byDomain = groupBy(await mailboxRows(c, query), (row) => row.email.split("@")[1]?.toLowerCase() ?? "");
  const rows = [...byDomain.entries()].map(([domain, members]) => ({
    domain,
    sent: members.reduce((sum, row) => sum + row.sent, 0),
    opened: members.reduce((sum, row) => sum + row.opened, 0),
    replied: members.reduce((sum, row) => sum + row.replied, 0),
    bounced: members.reduce((sum, row) => sum + row.bounced, 0),
  }));
  return okData(c, "domain_health_metrics", page(rows, query));
});

r.openapi(routes.mailboxProviders, async (c) => {
  const query = c.req.valid("query");
  const rows = await mailboxRows(c, query);
  const [tagRows] = await rawBatch(c.env.DB, [mailboxTagsQuery(rows.map((row) => row.id))]);
  const overallRows = [...groupBy(rows, (row) => row.provider).entries()].map(([provider, members]) => ({
    provider,
    sent: members.reduce((sum, row) => sum + row.sent, 0),
    opened: members.reduce((sum, row) => sum + row.opened, 0),
    replied: members.reduce((sum, row) => sum + row.replied, 0),
  }));
  const byId = new Map(rows.map((row) => [row.id, row]));
  const tagWise = new Map<string, { tag: string; provider: string; sent: number; opened: number }>();
  for (const tagRow of tagRows!) {
    const mailbox = byId.get(Number(tagRow.email_account_id))!;
    const key = `${String(tagRow.name)}\u0000${mailbox.provider}`;
    const entry = tagWise.get(key) ?? { tag: String(tagRow.name), provider: mailbox.provider, sent: 0, opened: 0 };
    entry.sent += mailbox.sent;
    entry.opened += mailbox.opened;
    tagWise.set(key, entry);
  }
  return okData(c, "email_providers_performance_overview", { overall: page(overallRows, query), tag_wise: [...tagWise.values()] });
});

r.openapi(routes.mailboxOverall, async (c) => {
  const rows = await visibleMailboxes(database(c.env.DB), c.get("principal"));
  const disconnected = (row: (typeof rows)[number]) => row.isSmtpSuccess === false || row.isImapSuccess === false;
  return okData(c, "overall_mailbox_stats", {
    total_connected: rows.filter((row) => !disconnected(row)).length,
    in_use: rows.filter((row) => Number(row.inUse) === 1).length,
    disconnected: rows.filter(disconnected).length,
    enabled_without_warmup: rows.filter((row) => !row.isSuspended && !row.warmupEnabled).length,
  });
});

r.openapi(routes.teamBoard, async (c) => {
  const query = c.req.valid("query");
  const { campaigns, window } = await scope(c, query);
  const [rows] = await rawBatch(c.env.DB, [teamBoardQuery(campaigns.map((row) => row.id), window)]);
  return okData(
    c,
    "team_board_stats",
    page(rows!, query).map((row) => ({
      id: Number(row.id),
      name: null,
      profile_pic_url: null,
      lead_count: Number(row.lead_count),
      campaign_count: Number(row.campaign_count),
      reply_count: Number(row.replied),
      positive_reply_count: Number(row.positive),
      reply_rate: percent(Number(row.replied), Number(row.sent)),
      positive_reply_rate: percent(Number(row.positive), Number(row.sent)),
      average_reply_time: row.reply_ms === null ? null : Math.round((Number(row.reply_ms) / 3_600_000) * 10) / 10,
      unique_open_count: Number(row.unique_open_count),
    })),
  );
});

