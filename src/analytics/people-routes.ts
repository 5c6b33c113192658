import { z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { createRouter } from "../platform/openapi";
import { rawBatch } from "../platform/sql";
import { categoriesOf } from "../leads/store";
import { mailboxesQuery, mailboxFiguresQuery } from "./campaign-store";
import { groupFigures, mailboxTagsQuery, repliesByCategoryQuery, teamBoardQuery, visibleMailboxes } from "./global-store";
import { groupBy, percent } from "./rules";
import type { AnyQuery, Ctx} from "./global-kit";
import { Dated, DatedPaged, Undated, MailboxHealthQuery, rate, overall, ANALYTICS_WINDOW, envelope, globalRoute, scope, page, okData } from "./global-kit";


const routes = {
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
      summary: "Per campaign team member: leads, replies and rates",
      description:
        "Per campaign team member (set by `POST /campaigns/{id}/team-member`), over that member's campaigns: leads, campaigns, replies, " +
        "positive replies, rates and average reply time. A conversation's own team member (`POST /master-inbox/update-team-member`) does not count here. " +
        ANALYTICS_WINDOW,
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

/** Account-wide analytics of leads, mailboxes and the team board. */
export const peopleAnalyticsRoutes = createRouter();
const r = peopleAnalyticsRoutes;

r.openapi(routes.leadOverall, async (c) => {
  const { campaigns, window } = await scope(c, c.req.valid("query"));
  const [sum] = await groupFigures(c.env.DB, [campaigns.map((row) => row.id)], window);
  const total = sum!.unique_lead_count;
  const fresh = sum!.new_leads;
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
  const principal = c.get("principal");
  const ids = campaigns.map((row) => row.id);
  const [figures] = await rawBatch(c.env.DB, [mailboxFiguresQuery(ids, window, { uniques: false })]);
  const [mailboxes] = await rawBatch(c.env.DB, [mailboxesQuery(principal, ids, figures!.map((row) => Number(row.mailbox_id)))]);
  const byId = new Map(mailboxes!.map((row) => [Number(row.id), row]));
  return figures!
    .sort((a, b) => Number(a.mailbox_id) - Number(b.mailbox_id))
    .map((row) => {
      const mailbox = byId.get(Number(row.mailbox_id));
      return {
        id: Number(row.mailbox_id),
        // Only a mailbox the caller may name shows its tags.
        known: mailbox?.type != null,
        email: String(mailbox?.from_email ?? mailbox?.sent_from ?? ""),
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
  const [tagRows] = await rawBatch(c.env.DB, [mailboxTagsQuery(rows.filter((row) => row.known).map((row) => row.id))]);
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


