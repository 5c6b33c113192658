import { createRoute, z } from "@hono/zod-openapi";
import { isTimeZone } from "../platform/zoned-time";
import { accountHasClient, CAMPAIGN_NOT_FOUND, findCampaign } from "../platform/access";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody } from "../platform/openapi";
import { normalizeDays, parseClock, type Schedule } from "../schedule/window";
import { bodyId, CampaignParams, ACK } from "./schemas";
import {
  presentStartTime,
  scheduleOf,
  scheduleWithDefaults,
  STOP_LEAD_SETTINGS,
  TRACK_SETTINGS,
  trackSetting,
  type SettingsChange,
} from "../schedule/settings";
import { campaignRedating } from "../schedule/redating-store";
import { wakeCampaign } from "../mailboxes/wake";
import { saveSchedule, saveSettings } from "./store";
import { refuseSubsequenceMove } from "../clients/store";

const clock = z.string().refine((value) => parseClock(value) !== null, "must be HH:MM (24 h)");
const timezone = z.string().refine(isTimeZone, "must be an IANA time zone name");
const days = z.array(z.number().int().min(0).max(7)).min(1).max(7);

const ScheduleFields = {
  timezone: timezone.optional(),
  tz: timezone.optional(),
  days_of_the_week: days.optional(),
  days: days.optional(),
  start_hour: clock.optional(),
  startHour: clock.optional(),
  end_hour: clock.optional(),
  endHour: clock.optional(),
  min_time_btw_emails: z.number().int().min(1).max(1440).optional(),
  max_new_leads_per_day: z.number().int().min(1).max(10_000).optional(),
  schedule_start_time: instant().nullish(),
  send_in_lead_timezone: z.boolean().optional().openapi({ description: "Send inside the schedule's days and hours in each lead's own zone (the campaign's when the lead has none); default false (CONTRACT 23.2)" }),
  use_lead_timezone: z.boolean().optional().openapi({ description: "Alias of send_in_lead_timezone" }),
};

const SetSchedule = z
  .object({ ...ScheduleFields, schedule: z.object(ScheduleFields).optional() })
  .openapi("SetCampaignSchedule");

const ScheduleAnswer = z
  .object({
    ok: z.boolean(),
    data: z.object({
      timezone: z.string(),
      days_of_the_week: z.array(z.number().int()),
      start_hour: z.string(),
      end_hour: z.string(),
      min_time_btw_emails: z.number().int(),
      max_new_leads_per_day: z.number().int(),
      schedule_start_time: z.string().nullable(),
      send_in_lead_timezone: z.boolean(),
    }),
  })
  .openapi("CampaignSchedule");

const numberLike = z.union([z.number(), z.string().regex(/^\d+(\.\d+)?$/).transform(Number)]);

const OutOfOffice = z.object({
  ignoreOOOasReply: z.boolean().optional(),
  autoReactivateOOO: z.boolean().optional(),
  reactivateOOOwithDelay: z.number().int().min(0).max(90).optional(),
  autoCategorizeOOO: z.boolean().optional(),
});

const SetSettings = z
  .object({
    name: z.string().trim().min(1).max(255).optional(),
    track_settings: z
      .array(z.enum([...TRACK_SETTINGS, "DONT_TRACK_EMAIL_OPEN", "DONT_TRACK_LINK_CLICK", "DONT_TRACK_REPLY_TO_AN_EMAIL"]))
      .max(3)
      .optional(),
    stop_lead_settings: z.enum(STOP_LEAD_SETTINGS).optional(),
    unsubscribe_text: z.string().max(500).optional(),
    add_unsubscribe_tag: z.boolean().optional(),
    send_as_plain_text: z.boolean().optional(),
    force_plain_text: z.boolean().optional(),
    follow_up_percentage: numberLike.pipe(z.number().int().min(0).max(100)).optional(),
    client_id: bodyId.nullable().optional(),
    out_of_office_detection_settings: OutOfOffice.optional(),
    ...OutOfOffice.shape,
    auto_pause_domain_leads_on_reply: z.boolean().optional(),
    bounce_autopause_threshold: numberLike.pipe(z.number().int().min(1).max(100_000)).nullable().optional(),
    enable_ai_esp_matching: z
      .unknown()
      .optional()
      .openapi({ description: "ESP matching (CONTRACT 23.3): true (or 1, \"true\") sends each record's first email from an attached mailbox of its recipient's provider with room today, else through normal rotation; follow-ups keep that mailbox" }),
    ai_esp_matching: z.unknown().optional().openapi({ description: "Alias of enable_ai_esp_matching" }),
    ignore_ss_mailbox_sending_limit: z.unknown().optional(),
    domain_level_rate_limit: z.unknown().optional(),
    ai_categorisation_options: z
      .unknown()
      .optional()
      .openapi({ description: "Category ids (or `{id, label}` objects) automatic categorisation may choose from when no prompt template is active (CONTRACT section 20.3); other shapes are stored and ignored" }),
    auto_categorise_reply: z.boolean().optional().openapi({ description: "false turns automatic reply categorisation off for this campaign (default true); out-of-office follows autoCategorizeOOO" }),
  })
  .openapi("SetCampaignSettings");

const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() }).openapi("Ack");

const tags = ["Campaigns"];
const routes = {
  schedule: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/schedule",
    operationId: "setCampaignSchedule",
    description: "Flat or nested (`{schedule: {...}}`) body. `timezone` (IANA; required until the campaign has a schedule), `days_of_the_week` (0–6, " +
      "0 = Sunday, 7 also Sunday), `start_hour`/`end_hour` (`HH:MM`, end after start), `min_time_btw_emails` (1–1440 min), " +
      "`max_new_leads_per_day` (1–10000), `schedule_start_time`, `send_in_lead_timezone` (the days and hours apply in each lead's own zone). Absent fields keep their value; a first schedule defaults to Mon–Fri 09:00–17:00.",
    tags,
    summary: "Set when a campaign sends: zone, days, hours, gap between emails, new leads per day, start time",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(SetSchedule, { timezone: "Europe/Berlin", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", min_time_btw_emails: 10, max_new_leads_per_day: 100 }) },
    responses: { 200: json(ScheduleAnswer, "The schedule as stored"), ...errorResponses(401, 404, 422, 429) },
  }),
  settings: createRoute({
    method: "post",
    path: "/api/v1/campaigns/{campaign_id}/settings",
    operationId: "updateCampaignSettings",
    description: "Every field optional, absent = unchanged: `name`, `track_settings` (turn off open pixels or link rewriting), `stop_lead_settings`, " +
      "`unsubscribe_text`, plain-text sending, `follow_up_percentage`, `client_id` (foreign → 400; another than the campaign's moves it as " +
      "assign-client does, subsequences, tags, spam tests and all, and a subsequence's → 400), out-of-office handling, domain " +
      "auto-pause and `bounce_autopause_threshold`. " + ACK,
    tags,
    summary: "Change a campaign's sending settings (absent fields keep their value)",
    security: API_KEY_SECURITY,
    request: { params: CampaignParams, body: jsonBody(SetSettings, { track_settings: ["DONT_TRACK_EMAIL_OPEN"], stop_lead_settings: "REPLY_TO_AN_EMAIL", unsubscribe_text: "Unsubscribe", follow_up_percentage: 100 }) },
    responses: { 200: json(Ack, "Settings stored"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
};

export const sendingRoutes = createRouter();

/** The schedule a change leads to, or the 422 refusing it: no zone on a first schedule, or an end not after the start. */
function checkedSchedule(next: Schedule | null): Schedule {
  if (!next) throw ApiError.validation([{ path: "timezone", message: "Required" }]);
  if (parseClock(next.end_hour)! <= parseClock(next.start_hour)!) {
    throw ApiError.validation([{ path: "end_hour", message: "end_hour must be after start_hour" }]);
  }
  return next;
}

sendingRoutes.openapi(routes.schedule, async (c) => {
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, c.get("principal"), c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  const given = { ...body, ...body.schedule };
  const change: Partial<Schedule> = {
    timezone: given.timezone ?? given.tz,
    days_of_the_week: (given.days_of_the_week ?? given.days) && normalizeDays((given.days_of_the_week ?? given.days)!),
    start_hour: given.start_hour ?? given.startHour,
    end_hour: given.end_hour ?? given.endHour,
    min_time_btw_emails: given.min_time_btw_emails,
    max_new_leads_per_day: given.max_new_leads_per_day,
    schedule_start_time: given.schedule_start_time === undefined ? undefined : given.schedule_start_time,
    send_in_lead_timezone: given.send_in_lead_timezone ?? given.use_lead_timezone,
  };
  const now = Date.now();
  const before = scheduleOf(campaign.schedule);
  // Re-dated by the hours this change leads to, applied only if the change is stored (redating-store.ts).
  const redating = await campaignRedating(db, campaign.id, before, checkedSchedule(scheduleWithDefaults(before, change)), now);
  const saved = await saveSchedule(c.env.DB, campaign.id, change, now, redating);
  if (!saved) throw ApiError.notFound(CAMPAIGN_NOT_FOUND);
  // Not applied: a concurrent post moved the hour this one kept, and the same check over what is stored now refuses it.
  const next = saved.applied ? saved.schedule : checkedSchedule(scheduleWithDefaults(saved.schedule, change));
  // The senders sleep until the old hours' next opening: new hours may be open now.
  if (campaign.status === "ACTIVE") await wakeCampaign(c.env, campaign.id);
  const data = {
    ...next,
    days_of_the_week: [...next.days_of_the_week],
    schedule_start_time: presentStartTime(next),
    send_in_lead_timezone: next.send_in_lead_timezone ?? false,
  };
  return c.json({ ok: true, data }, 200);
});

sendingRoutes.openapi(routes.settings, async (c) => {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, c.req.valid("param").campaign_id);
  const body = c.req.valid("json");
  let clientId: number | null | undefined;
  if (body.client_id !== undefined) {
    const allowed =
      body.client_id === null
        ? principal.clientId === null
        : principal.clientId !== null
          ? body.client_id === principal.clientId
          : await accountHasClient(db, principal.accountId, body.client_id);
    if (!allowed) throw ApiError.badRequest("Client not found");
    // The client it has already is no move (a client key's own always is); another is assign-client's.
    if (body.client_id !== campaign.clientId) {
      refuseSubsequenceMove(campaign);
      clientId = body.client_id;
    }
  }
  const ooo = { ...body.out_of_office_detection_settings };
  for (const key of ["ignoreOOOasReply", "autoReactivateOOO", "reactivateOOOwithDelay", "autoCategorizeOOO"] as const) {
    if (body[key] !== undefined) Object.assign(ooo, { [key]: body[key] });
  }
  const stored = Object.fromEntries(
    (["enable_ai_esp_matching", "ignore_ss_mailbox_sending_limit", "domain_level_rate_limit", "ai_categorisation_options"] as const)
      .filter((key) => body[key] !== undefined)
      .map((key) => [key, body[key]]),
  );
  if (body.ai_esp_matching !== undefined && body.enable_ai_esp_matching === undefined) stored.enable_ai_esp_matching = body.ai_esp_matching;
  // Only the given fields: the statement sets them over what is stored then, so a concurrent post's fields stay.
  const change: SettingsChange = {
    trackSettings: body.track_settings && [...new Set(body.track_settings.map(trackSetting))],
    stopLeadSettings: body.stop_lead_settings,
    unsubscribeText: body.unsubscribe_text,
    addUnsubscribeTag: body.add_unsubscribe_tag,
    sendAsPlainText: body.send_as_plain_text,
    forcePlainText: body.force_plain_text,
    followUpPercentage: body.follow_up_percentage,
    outOfOffice: ooo,
    autoPauseDomainLeadsOnReply: body.auto_pause_domain_leads_on_reply,
    bounceAutopauseThreshold: body.bounce_autopause_threshold,
    autoCategoriseReply: body.auto_categorise_reply,
    stored,
  };
  await saveSettings(db, campaign, { settings: change, name: body.name, clientId }, Date.now());
  return c.json({ ok: true, success: true, message: "Campaign settings updated successfully" }, 200);
});
