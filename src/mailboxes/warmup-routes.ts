import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, json, jsonBody, errorResponses } from "../platform/openapi";
import { iso } from "../platform/time";
import { parseCalendarDate } from "../platform/zoned-time";
import { DAY_MS, reputation } from "../warmup/rules";
import { warmupCounters, warmupStatsOf } from "../warmup/store";
import { utcDayStart, warmupTurnedOn } from "./rules";
import { findMailbox, updateMailbox, type MailboxChanges } from "./store";
import { Ack, IdParams } from "./schemas";
import { MAILBOX_TAG, ack } from "./shared";
import { sendWarmupOtp } from "./wake";
import { newOtp, verifyOtp } from "../warmup/otp";

// Schemas.

const tag = MAILBOX_TAG;
const security = API_KEY_SECURITY;
const count = (max: number) => z.number().int().min(1).max(max);

/** CONTRACT 19.1: §10's body, widened, with the bulk page's fields; its camel-case names are read too (the snake-case one wins). */
const WarmupSettings = z
  .object({
    warmup_enabled: z.boolean(),
    total_warmup_per_day: count(250).optional(),
    daily_rampup: z.number().int().min(0).max(100).optional(),
    reply_rate_percentage: z.number().int().min(0).max(100).optional(),
    warmup_key_id: z.string().trim().max(100).nullable().optional(),
    auto_adjust_warmup: z.boolean().optional(),
    is_rampup_enabled: z.boolean().optional(),
    warmup_min_count: count(250).optional(),
    send_warmups_only_on_weekdays: z.boolean().optional(),
    daily_reply_limit: z.number().int().min(8).max(80).nullable().optional(),
    use_custom_domain: z.boolean().optional(),
    maxEmailPerDay: count(250).optional().openapi({ description: "= total_warmup_per_day (the bulk page's name)" }),
    warmupMaxCount: count(250).optional().openapi({ description: "= total_warmup_per_day" }),
    warmupMinCount: count(250).optional(),
    replyRate: z.number().int().min(0).max(100).optional(),
    rampupValue: z.number().int().min(0).max(100).optional(),
    isRampupEnabled: z.boolean().optional(),
    sendWarmupsOnlyOnWeekdays: z.boolean().optional(),
    autoAdjustWarmup: z.boolean().optional(),
    warmupTagIdentifier: z.string().trim().max(100).nullable().optional(),
    dailyReplyLimit: z.number().int().min(8).max(80).nullable().optional(),
  })
  .openapi("WarmupSettings");

const StatsQuery = z.object({
  start_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be YYYY-MM-DD").optional().openapi({ description: "Extension: the window's first UTC day (with end_date; at most 30 days)" }),
  end_date: z.string().regex(/^\d{4}-\d{2}-\d{2}$/, "must be YYYY-MM-DD").optional(),
});

const count_ = z.number().int();
const WarmupStats = z
  .object({
    ok: z.boolean(),
    id: count_,
    sent_count: count_,
    spam_count: count_,
    inbox_count: count_,
    warmup_email_received_count: count_,
    total_sent: count_,
    reputation_score: z.number().nullable(),
    stats_by_date: z.array(z.object({ id: count_, date: z.string(), sent_count: count_, reply_count: count_, save_from_spam_count: count_, inbox_count: count_, spam_count: count_ })),
    daily_stats: z.array(z.object({ date: z.string(), sent: count_, spam: count_, delivered: count_, opened: count_, replied: count_ })),
  })
  .openapi("WarmupStats");

const routes = {
  warmup: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}/warmup",
    operationId: "setEmailAccountWarmup",
    description:
      "Turns the mailbox's warmup on or off and sets how it runs (CONTRACT 19.1): the daily volume (`warmup_min_count` to `total_warmup_per_day`, ramping by `daily_rampup` when `is_rampup_enabled`), weekdays only, auto-adjust to campaign volume, the reply share and daily reply limit. On, the mailbox joins its pool of the account's (or the deployment's shared) warmup mailboxes once its connection checks pass; off, it leaves at once (mail already sent is still tracked). Turning warmup off and on unblocks it. `warmup_key_id`, the identifier ending every warmup email, is generated when first enabled without one. The bulk page's camel-case names are read too.",
    tags: tag,
    summary: "Set the mailbox's warmup: on/off, daily volume and ramp, weekdays, replies",
    security,
    request: {
      params: IdParams,
      body: jsonBody(WarmupSettings, { warmup_enabled: true, total_warmup_per_day: 20, daily_rampup: 2, reply_rate_percentage: 30 }),
    },
    responses: { 200: json(Ack, "Stored"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  warmupStats: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/{id}/warmup-stats",
    operationId: "getEmailAccountWarmupStats",
    description:
      "What the mailbox's warmup mail did, as its receivers recorded it (CONTRACT 19.3): lifetime counts, and per UTC day of the last 7 (or `start_date`..`end_date`, at most 30 days) the mail sent, where receivers first found it (inbox or spam), how much was moved out of spam, read, and answered. `reputation_score` is the inbox share of the last 7 days (null under 10 observations).",
    tags: tag,
    summary: "Warmup statistics: sent, landed in inbox or spam, rescued, replied, per day",
    security,
    request: { params: IdParams, query: StatsQuery },
    responses: { 200: json(WarmupStats, "Statistics"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
};

const OtpAnswer = z.object({ ok: z.boolean(), data: z.string() }).openapi("WarmupOtpAnswer");

const otpRoutes = {
  sendOtp: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}/send-otp-email",
    operationId: "sendWarmupUnblockOtp",
    description:
      "For a mailbox whose warmup is blocked (CONTRACT 19.4): the mailbox mails a 6-digit code to its own address, valid 10 minutes, single use, 5 tries. Not blocked: 400 `Warmup is not blocked for this mailbox`; the mail server refusing the email: 400 with its words (a refusal of the mailbox's sending for now, such as a 421, holds the mailbox, and while it holds the code is refused with 400 naming when it may send). The code's email never appears in the inbox or any record.",
    tags: tag,
    summary: "Mail a code that unblocks the mailbox's warmup to its own address",
    security,
    request: { params: IdParams },
    responses: { 200: json(OtpAnswer, "Sent"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  verifyOtp: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}/verify-otp",
    operationId: "verifyWarmupUnblockOtp",
    description:
      "The code the mailbox received from `send-otp-email` (CONTRACT 19.4): right, warmup is unblocked and ACTIVE; wrong, 400 `The OTP entered is incorrect. Please attempt again.`; none valid (never sent, expired, used or out of tries), 400 `No valid OTP exists for this email account.`",
    tags: tag,
    summary: "Unblock the mailbox's warmup with the code it received",
    security,
    request: {
      params: IdParams,
      body: jsonBody(z.object({ otp: z.union([z.string().trim().min(1).max(20), z.number().int().nonnegative()]) }).openapi("WarmupOtp"), { otp: "123456" }),
    },
    responses: { 200: json(OtpAnswer, "Unblocked"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
};

export const mailboxWarmupRoutes = createRouter();

mailboxWarmupRoutes.openapi(otpRoutes.sendOtp, async (c) => {
  const mailbox = await findMailbox(database(c.env.DB), c.get("principal"), c.req.valid("param").id);
  if (mailbox.warmupBlockedReason === null) throw ApiError.badRequest("Warmup is not blocked for this mailbox");
  const sent = await sendWarmupOtp(c.env, mailbox.id, newOtp());
  if (!sent.ok) throw ApiError.badRequest(sent.message);
  return c.json({ ok: true, data: "OTP has been sent successfully." }, 200);
});

mailboxWarmupRoutes.openapi(otpRoutes.verifyOtp, async (c) => {
  const db = database(c.env.DB);
  const mailbox = await findMailbox(db, c.get("principal"), c.req.valid("param").id);
  const { otp } = c.req.valid("json");
  const check = await verifyOtp(db, mailbox.id, typeof otp === "number" ? String(otp).padStart(6, "0") : otp, Date.now());
  if (check === "none") throw ApiError.badRequest("No valid OTP exists for this email account.");
  if (check === "wrong") throw ApiError.badRequest("The OTP entered is incorrect. Please attempt again.");
  return c.json({ ok: true, data: "OTP verification completed successfully; your warmup account is now unblocked." }, 200);
});

mailboxWarmupRoutes.openapi(routes.warmup, async (c) => {
  const db = database(c.env.DB);
  const existing = await findMailbox(db, c.get("principal"), c.req.valid("param").id);
  const body = c.req.valid("json");
  const total = body.total_warmup_per_day ?? body.maxEmailPerDay ?? body.warmupMaxCount;
  const min = body.warmup_min_count ?? body.warmupMinCount;
  if (min !== undefined && min > (total ?? existing.totalWarmupPerDay)) throw ApiError.badRequest("warmup_min_count must not exceed total_warmup_per_day");
  // A smaller maximum pulls a stored minimum down with it.
  const storedMin = min ?? (total !== undefined && existing.warmupMinCount !== null && existing.warmupMinCount > total ? total : undefined);
  const key = body.warmup_key_id !== undefined ? body.warmup_key_id : body.warmupTagIdentifier;
  const changes: MailboxChanges = {
    warmupEnabled: body.warmup_enabled,
    totalWarmupPerDay: total,
    dailyRampup: body.daily_rampup ?? body.rampupValue,
    replyRatePercentage: body.reply_rate_percentage ?? body.replyRate,
    warmupKeyId: key === undefined ? undefined : key || null,
    autoAdjustWarmup: body.auto_adjust_warmup ?? body.autoAdjustWarmup,
    isRampupEnabled: body.is_rampup_enabled ?? body.isRampupEnabled,
    warmupMinCount: storedMin,
    sendWarmupsOnlyOnWeekdays: body.send_warmups_only_on_weekdays ?? body.sendWarmupsOnlyOnWeekdays,
    dailyReplyLimit: body.daily_reply_limit !== undefined ? body.daily_reply_limit : body.dailyReplyLimit,
    useCustomDomain: body.use_custom_domain,
  };
  const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  // A key given now is kept; otherwise turning warmup on generates one when none is stored.
  const turnedOn = warmupTurnedOn({ ...existing, warmupKeyId: changes.warmupKeyId ?? existing.warmupKeyId }, body.warmup_enabled);
  await updateMailbox(db, null, existing.id, { ...defined, ...turnedOn, updatedAt: new Date() }, {});
  return c.json(ack("Warmup settings updated successfully"), 200);
});

mailboxWarmupRoutes.openapi(routes.warmupStats, async (c) => {
  const db = database(c.env.DB);
  const mailbox = await findMailbox(db, c.get("principal"), c.req.valid("param").id);
  const query = c.req.valid("query");
  const now = Date.now();
  const today = utcDayStart(now);
  let first = today - 6 * DAY_MS;
  let last = today;
  if (query.start_date !== undefined || query.end_date !== undefined) {
    const start = query.start_date === undefined ? null : parseCalendarDate(query.start_date);
    const end = query.end_date === undefined ? today : parseCalendarDate(query.end_date);
    if (start === null || end === null) throw ApiError.badRequest("start_date and end_date must be real dates (YYYY-MM-DD), start_date required with end_date");
    if (end < start) throw ApiError.badRequest("end_date must not be before start_date");
    if ((end - start) / DAY_MS + 1 > 30) throw ApiError.badRequest("The date range must not exceed 30 days");
    [first, last] = [start, end];
  }
  const stats = await warmupStatsOf(db, mailbox.id, first, last);
  const week = (await warmupCounters(db, [mailbox.id], now, today)).get(mailbox.id)!;
  const dates = stats.days.map((d) => iso(d.day).slice(0, 10));
  return c.json(
    {
      ok: true,
      id: mailbox.id,
      sent_count: stats.sent,
      spam_count: stats.spam,
      inbox_count: stats.inbox,
      warmup_email_received_count: stats.received,
      total_sent: stats.sent,
      reputation_score: reputation(week.inbox, week.observed),
      stats_by_date: stats.days.map((d, i) => ({ id: i + 1, date: dates[i]!, sent_count: d.sent, reply_count: d.replied, save_from_spam_count: d.rescued, inbox_count: d.inbox, spam_count: d.spam })),
      daily_stats: stats.days.map((d, i) => ({ date: dates[i]!, sent: d.sent, spam: d.spam, delivered: d.inbox, opened: d.opened, replied: d.replied })),
    },
    200,
  );
});
