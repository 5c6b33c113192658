import { createRoute, z } from "@hono/zod-openapi";
import { campaignCounts } from "./store";
import { database } from "../platform/db";
import { iso } from "../platform/time";
import { daysBetween, isTimeZone, parseCalendarDate, zonedDayRange } from "../platform/zoned-time";
import { findCampaign } from "../platform/access";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, json } from "../platform/openapi";
import { CampaignParams } from "../campaigns/schemas";

const MAX_RANGE_DAYS = 30;
/** What every campaign analytics route says about its campaign (the reference's words). */
export const CAMPAIGN_ANALYTICS = "Unknown or foreign campaign → 404 `Campaign not found`.";
const RANGE_TOO_WIDE = "Invalid start_date & end_date range. Date difference should be max of 30days.";

const calendarDate = z
  .string()
  .refine((value) => parseCalendarDate(value) !== null, "Must be a calendar date as YYYY-MM-DD")
  .openapi({ example: "2026-11-01" });

const AnalyticsQuery = z.object({
  start_date: calendarDate,
  end_date: calendarDate,
  time_zone: z
    .string()
    .refine(isTimeZone, "Must be an IANA time zone name")
    .default("UTC")
    .openapi({ example: "America/New_York" }),
});

const count = z.string().regex(/^\d+$/);

const CampaignAnalytics = z
  .object({
    id: z.number().int(),
    user_id: z.number().int(),
    created_at: z.string(),
    status: z.string(),
    name: z.string(),
    start_date: z.string(),
    end_date: z.string(),
    sent_count: count,
    unique_sent_count: count,
    open_count: count,
    unique_open_count: count,
    human_open_count: count.openapi({ description: "Opens not made by a machine (proxy prefetch, link scanner, HEAD); extension" }),
    unique_human_open_count: count.openapi({ description: "Leads with an open not made by a machine; extension" }),
    click_count: count,
    unique_click_count: count,
    human_click_count: count.openapi({ description: "Clicks not made by a machine (link scanners, HEAD); extension" }),
    unique_human_click_count: count.openapi({ description: "Leads with a click not made by a machine; extension" }),
    reply_count: count,
    total_reply_count: count,
    non_ooo_reply_count: count,
    block_count: count,
    bounce_count: count,
    unsubscribed_count: count,
    total_count: count,
    drafted_count: count,
  })
  .openapi("CampaignAnalytics");

const analyticsByDate = createRoute({
  method: "get",
  path: "/api/v1/campaigns/{campaign_id}/analytics-by-date",
  operationId: "getCampaignAnalyticsByDate",
  description: "Campaign counts for `start_date`..`end_date` (`YYYY-MM-DD`, required) in `time_zone` (IANA, default UTC), DST-correct. Every count is " +
    "a decimal string. End before start → 400; more than 30 days → 400 `Invalid start_date & end_date range...`. " + CAMPAIGN_ANALYTICS,
  tags: ["Analytics"],
  summary: "Campaign statistics for a date range of at most 30 days, in a time zone",
  security: API_KEY_SECURITY,
  request: { params: CampaignParams, query: AnalyticsQuery },
  responses: { 200: json(CampaignAnalytics, "Counts as strings"), ...errorResponses(400, 401, 404, 422, 429) },
});

export const analyticsRoutes = createRouter();

analyticsRoutes.openapi(analyticsByDate, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const { start_date, end_date, time_zone } = c.req.valid("query");
  const [first, last] = [parseCalendarDate(start_date)!, parseCalendarDate(end_date)!];
  if (last < first) throw ApiError.badRequest("end_date must not be before start_date");
  if (daysBetween(first, last) > MAX_RANGE_DAYS) throw ApiError.badRequest(RANGE_TOO_WIDE);

  const { start, end } = zonedDayRange(first, last, time_zone);
  const counts = await campaignCounts(c.env.DB, campaign.id, start, end);
  return c.json(
    {
      id: campaign.id,
      user_id: campaign.accountId,
      created_at: iso(campaign.createdAt),
      status: campaign.status,
      name: campaign.name,
      start_date,
      end_date,
      ...Object.fromEntries(Object.entries(counts).map(([field, value]) => [field, String(value)])),
    } as z.infer<typeof CampaignAnalytics>,
    200,
  );
});
