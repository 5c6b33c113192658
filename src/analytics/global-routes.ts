import { z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { createRouter } from "../platform/openapi";
import { rawBatch } from "../platform/sql";
import { campaignFigures, dailyTotals, firstReplyDelaysQuery, firstReplyLeadCounts, followUpQuery, groupFigures, positiveReplyQuarters, repliesByCategoryQuery, sendQuarterCounts, visibleClients } from "./global-store";
import { sentimentOf } from "../categories/rules";
import { groupBy, localDays, percent, REPLY_TIME_BUCKETS, replyTimeBucket } from "./rules";
import { paging, Dated, DatedPaged, Undated, ClientStatsQuery, rate, DayRow, PositiveDayRow, ANALYTICS_WINDOW, envelope, globalRoute, OverallStats, overallResponse, scope, rates, overallOf, page, dayIndex, okData } from "./global-kit";


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
};

export const globalAnalyticsRoutes = createRouter();
const r = globalAnalyticsRoutes;

for (const route of [routes.overallV2, routes.overview]) {
  r.openapi(route, async (c) => {
    const { campaigns, window } = await scope(c, c.req.valid("query"));
    const [figures] = await groupFigures(c.env.DB, [campaigns.map((row) => row.id)], window);
    return okData(c, "overall_stats", overallOf(figures!));
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
  const { sentTo, replied } = await firstReplyLeadCounts(c.env.DB, campaigns.map((row) => row.id), window);
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
  const figures = await groupFigures(c.env.DB, clients.map((client) => (byClient.get(client.id) ?? []).map((row) => row.id)), window);
  return okData(
    c,
    "client_wise_performance",
    clients.map((client, index) => {
      const own = byClient.get(client.id) ?? [];
      const sum = figures[index]!;
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

