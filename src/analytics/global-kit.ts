/** What the account-wide analytics routes share: their queries, window and scope, and their answers' shapes. */
import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import type { AppEnv } from "../platform/env";
import { database } from "../platform/db";
import { isTimeZone, parseCalendarDate } from "../platform/zoned-time";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, errorResponses, json, queryBoolean, queryCount, operationWords, type OperationWords } from "../platform/openapi";
import { type Window } from "./counters";
import { selectedCampaigns, type Figures } from "./global-store";
import { dateWindow, percent } from "./rules";

/** CONTRACT 13.7: a year at most (inferred cap). */
const MAX_GLOBAL_RANGE_DAYS = 366;
const GLOBAL_RANGE_TOO_WIDE = "Invalid start_date & end_date range. Date difference should be max of 366 days.";

const calendarDate = z
  .string()
  .refine((value) => parseCalendarDate(value) !== null, "Must be a calendar date as YYYY-MM-DD")
  .openapi({ example: "2026-11-01" });
const zoneName = z.string().refine(isTimeZone, "Must be an IANA time zone name").optional();
// A repeated parameter reaches validation as an array (CONTRACT 13.7 reads it too): joined, it is one list.
const idList = z
  .preprocess((value) => (Array.isArray(value) ? value.join(",") : value), z.string().regex(/^\s*\d+\s*(,\s*\d+\s*)*$/, "Must be comma-separated ids"))
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
export const paging = { limit: queryCount(1, 100).default(100), offset: queryCount(0).default(0) };

export const Dated = z.object({ start_date: calendarDate, end_date: calendarDate, ...common });
export const DatedPaged = Dated.extend(paging);
export const Undated = z.object({ start_date: calendarDate.optional(), end_date: calendarDate.optional(), ...common });
export const ClientStatsQuery = DatedPaged.extend({ filter: z.string().max(200).optional().openapi({ description: "Client-name substring" }) });
export const MailboxHealthQuery = DatedPaged.extend({ is_bounced: queryBoolean.optional().openapi({ description: "true keeps mailboxes with bounces" }) });

export type AnyQuery = z.infer<typeof Undated> & Partial<z.infer<typeof DatedPaged>>;

export const rate = z.string().openapi({ example: "12.5%" });
export const overall = {
  sent: z.number().int(),
  opened: z.number().int(),
  replied: z.number().int(),
  bounced: z.number().int(),
};
export const DayRow = z.object({ date: z.string(), ...overall });
export const PositiveDayRow = z.object({ date: z.string(), positive_replied: z.number().int() });

/** What every account-wide analytics route says about its window (the reference's words). */
export const ANALYTICS_WINDOW =
  "Window: `start_date`..`end_date` (`YYYY-MM-DD`) as local days in `time_zone` (or `timezone`; IANA, default UTC), DST-correct; " +
  "`campaign_ids`/`client_ids` narrow it to some campaigns or clients. A client key sees its client's campaigns only.";

export function envelope<S extends z.ZodType>(key: string, schema: S, name: string) {
  return z.object({ ok: z.literal(true), data: z.object({ [key]: schema }) }).openapi(name);
}

export function globalRoute<Q extends z.ZodObject, R extends z.ZodType>(path: string, words: OperationWords, query: Q, response: R) {
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

export const OverallStats = z.object({
  ...overall,
  unique_lead_count: z.number().int(),
  unique_open_count: z.number().int(),
  positive_replied: z.number().int(),
  open_rate: rate,
  reply_rate: rate,
  positive_reply_rate: rate,
  bounce_rate: rate,
});
export const overallResponse = envelope("overall_stats", OverallStats, "AnalyticsOverallStats");


export type Ctx = Context<AppEnv>;

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
export async function scope(c: Ctx, query: AnyQuery): Promise<Scope> {
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

export function rates(figures: Figures) {
  return {
    open_rate: percent(figures.opened, figures.sent),
    reply_rate: percent(figures.replied, figures.sent),
    positive_reply_rate: percent(figures.positive_replied, figures.sent),
    bounce_rate: percent(figures.bounced, figures.sent),
  };
}

export function overallOf(figures: Figures) {
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

export function page<T>(items: T[], query: AnyQuery): T[] {
  const offset = query.offset ?? 0;
  return items.slice(offset, offset + (query.limit ?? 100));
}

/** The index of the local day holding `instant`, or -1 (days are ascending and contiguous). */
export function dayIndex(days: { window: Window }[], instant: number): number {
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

export function okData<T>(c: Ctx, key: string, value: T) {
  return c.json({ ok: true as const, data: { [key]: value } }, 200);
}

