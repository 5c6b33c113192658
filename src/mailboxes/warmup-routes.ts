import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import { API_KEY_SECURITY, createRouter, json, jsonBody, errorResponses } from "../platform/openapi";
import { warmupStats } from "./rules";
import { findMailbox, updateMailbox, type MailboxChanges } from "./store";
import { Ack, IdParams } from "./schemas";
import { MAILBOX_TAG, ack } from "./shared";

// Schemas.

const tag = MAILBOX_TAG;
const security = API_KEY_SECURITY;
const routes = {
  warmup: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/{id}/warmup",
    operationId: "setEmailAccountWarmup",
    description: "Stores warmup settings (shown in `warmup_details`); Salvo runs no warmup network, so they change nothing sent.",
    tags: tag,
    summary: "Warmup settings (stored and shown; Salvo runs no warmup network)",
    security,
    request: {
      params: IdParams,
      body: jsonBody(
        z.object({
          warmup_enabled: z.boolean(),
          total_warmup_per_day: z.number().int().min(1).max(100).optional(),
          daily_rampup: z.number().int().min(0).max(100).optional(),
          reply_rate_percentage: z.number().int().min(0).max(100).optional(),
          warmup_key_id: z.string().trim().max(100).nullable().optional(),
          auto_adjust_warmup: z.boolean().optional(),
          is_rampup_enabled: z.boolean().optional(),
        }), { warmup_enabled: true, total_warmup_per_day: 20, daily_rampup: 2 },
      ),
    },
    responses: { 200: json(Ack, "Stored"), ...errorResponses(401, 404, 422, 429) },
  }),
  warmupStats: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/{id}/warmup-stats",
    operationId: "getEmailAccountWarmupStats",
    description: "Warmup statistics of the last 7 UTC days; all 0, as Salvo runs no warmup network.",
    tags: tag,
    summary: "Warmup statistics of the last 7 UTC days (all 0: no warmup network)",
    security,
    request: { params: IdParams },
    responses: {
      200: json(
        z.object({
          ok: z.boolean(),
          total_sent: z.number().int(),
          spam_count: z.number().int(),
          sent_count: z.number().int(),
          inbox_count: z.number().int(),
          reputation_score: z.number().nullable(),
          daily_stats: z.array(z.object({ date: z.string(), sent: z.number().int(), spam: z.number().int(), delivered: z.number().int(), opened: z.number().int(), replied: z.number().int() })),
        }),
        "Statistics",
      ),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
};

export const mailboxWarmupRoutes = createRouter();

mailboxWarmupRoutes.openapi(routes.warmup, async (c) => {
  const db = database(c.env.DB);
  const existing = await findMailbox(db, c.get("principal"), c.req.valid("param").id);
  const body = c.req.valid("json");
  const changes: MailboxChanges = {
    warmupEnabled: body.warmup_enabled,
    totalWarmupPerDay: body.total_warmup_per_day,
    dailyRampup: body.daily_rampup,
    replyRatePercentage: body.reply_rate_percentage,
    warmupKeyId: body.warmup_key_id === undefined ? undefined : body.warmup_key_id || null,
    autoAdjustWarmup: body.auto_adjust_warmup,
    isRampupEnabled: body.is_rampup_enabled,
  };
  const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined));
  await updateMailbox(db, null, existing.id, { ...defined, updatedAt: new Date() }, {});
  return c.json(ack("Warmup settings updated successfully"), 200);
});

mailboxWarmupRoutes.openapi(routes.warmupStats, async (c) => {
  await findMailbox(database(c.env.DB), c.get("principal"), c.req.valid("param").id);
  return c.json(warmupStats(Date.now()), 200);
});
