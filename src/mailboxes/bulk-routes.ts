import { createRoute, z } from "@hono/zod-openapi";
import { config } from "../config";
import { owningClient, refuseForeignTags } from "../platform/access";
import { emailAccounts } from "../db/schema";
import { database } from "../platform/db";
import { ApiError } from "../platform/errors";
import { API_KEY_SECURITY, BodyId, createRouter, errorResponses, json, jsonBody, optionalJsonBody, queryBoolean } from "../platform/openapi";
import { mailPolicy } from "../platform/outbound";
import { emailAddress } from "../mail/address";
import { distinct, warmupTurnedOn } from "./rules";
import { checkedTrackingDomain, mailboxReadAnswer } from "./routes";
import { startLiveFetch, updateMailboxes, visibleMailboxOfAddress, visibleWarmupStates } from "./bulk-store";
import { MAILBOX_NOT_FOUND, visibleTagIds, type MailboxChanges } from "./store";
import { EmailAccount, FromName } from "./schemas";
import { MAILBOX_TAG } from "./shared";
import { wakeMailboxes } from "./wake";

// Schemas.

const tags = MAILBOX_TAG;
const security = API_KEY_SECURITY;

const WarmupCount = z.number().int().min(1).max(250);

/** The hosted page's fields, each the §10 / CONTRACT 19.1 field of the same meaning with its rules. */
const UpdateData = z
  .object({
    messagePerDay: z.number().int().min(1).max(10000).optional().openapi({ description: "max_email_per_day" }),
    minTimeToWaitInMins: z.number().int().min(0).max(1440).optional().openapi({ description: "time_to_wait_in_mins" }),
    fromName: FromName.optional(),
    signature: z.string().max(10_000).nullable().optional(),
    customTrackingDomain: z.string().max(300).nullable().optional().openapi({ description: "custom_tracking_url; \"\" or null clears it" }),
    status: z.enum(["ACTIVE", "INACTIVE"]).optional().openapi({ description: "Warmup on or off (warmup_enabled)" }),
    maxEmailPerDay: WarmupCount.optional().openapi({ description: "Warmup mail per day (total_warmup_per_day)" }),
    warmupMinCount: WarmupCount.optional(),
    warmupMaxCount: WarmupCount.optional().openapi({ description: "total_warmup_per_day (as maxEmailPerDay; they must agree when both are given)" }),
    replyRate: z.number().int().min(0).max(100).optional().openapi({ description: "reply_rate_percentage" }),
    isRampupEnabled: z.boolean().optional(),
    rampupValue: z.number().int().min(0).max(100).optional().openapi({ description: "daily_rampup" }),
    sendWarmupsOnlyOnWeekdays: z.boolean().optional(),
    autoAdjustWarmup: z.boolean().optional(),
    useCustomDomain: z.boolean().optional(),
    warmupTagIdentifier: z.string().trim().min(1).max(100).regex(/^[A-Za-z0-9_-]+$/, "Letters, digits, _ and - only").optional().openapi({ description: "warmup_key_id" }),
    dailyReplyLimit: z.number().int().min(8).max(80).optional(),
    tags: z.array(BodyId).min(1).max(100).optional().openapi({ description: "Replaces the mailboxes' tags" }),
    clientId: BodyId.nullable().optional(),
  })
  .strict()
  .superRefine((data, ctx) => {
    const max = data.warmupMaxCount ?? data.maxEmailPerDay;
    if (data.warmupMaxCount !== undefined && data.maxEmailPerDay !== undefined && data.warmupMaxCount !== data.maxEmailPerDay) {
      ctx.addIssue({ code: "custom", path: ["warmupMaxCount"], message: "warmupMaxCount and maxEmailPerDay name the same setting: give one value" });
    }
    if (data.warmupMinCount !== undefined && max !== undefined && data.warmupMinCount > max) {
      ctx.addIssue({ code: "custom", path: ["warmupMinCount"], message: "warmupMinCount must not exceed the maximum" });
    }
    if (Object.values(data).every((value) => value === undefined)) ctx.addIssue({ code: "custom", path: [], message: "updateData names no field" });
  });

const BulkUpdate = z
  .object({ emailAccountIds: z.array(BodyId).min(1).max(1000), updateData: UpdateData })
  .openapi("BulkUpdateEmailAccountConfig");

const Done = z.object({ ok: z.boolean(), message: z.string() });

const routes = {
  byEmail: createRoute({
    method: "get",
    path: "/api/v1/email-accounts/fetch-email-account-details",
    operationId: "getEmailAccountByEmail",
    summary: "A mailbox by its from address",
    description:
      "The by-id answer (`GET /email-accounts/{id}`) for the caller's mailbox whose `from_email` is `email` (compared case-insensitively); `fetch_campaigns` and `fetch_tags` as there. None → 404 `{\"error\":\"Email account not found\"}`; a missing or invalid `email` → 422.",
    tags,
    security,
    request: { query: z.object({ email: emailAddress(), fetch_campaigns: queryBoolean.optional(), fetch_tags: queryBoolean.optional() }) },
    responses: { 200: json(EmailAccount, "Bare EmailAccount"), ...errorResponses(401, 404, 422, 429) },
  }),
  bulkUpdate: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/bulk-update-email-account-config",
    operationId: "bulkUpdateEmailAccountConfig",
    summary: "Change settings and warmup of many mailboxes at once",
    description:
      "`{emailAccountIds (1-1000), updateData}`: every field of `updateData` is the per-mailbox setting of the same meaning, with its rules — `messagePerDay` = `max_email_per_day`, `minTimeToWaitInMins` = `time_to_wait_in_mins`, `fromName`, `signature`, `customTrackingDomain` = `custom_tracking_url`, and warmup's (CONTRACT 19.1): `status` (ACTIVE/INACTIVE; a blocked warmup sent ACTIVE stays INACTIVE: the unblock code or the mailbox's own switch lifts a block), `maxEmailPerDay`/`warmupMaxCount` = `total_warmup_per_day` (1-250), `warmupMinCount` (≤ the maximum), `replyRate`, `isRampupEnabled`, `rampupValue` = `daily_rampup`, `sendWarmupsOnlyOnWeekdays`, `autoAdjustWarmup`, `useCustomDomain`, `warmupTagIdentifier` = `warmup_key_id` ([A-Za-z0-9_-]), `dailyReplyLimit` (8-80); `tags` (tag ids, ≥ 1) replaces the mailboxes' tags; `clientId` moves them to a client (account key), and they leave their old scope's tags. An unknown field → 422. Ids the caller cannot see are skipped and listed; the rest change together, all or nothing. A tag or client the caller cannot use → 400; a tag of another scope than a mailbox's (another client's, or the account's for a client's mailbox; with `clientId`, than the scope it moves them to) → 400, nothing changed.",
    tags,
    security,
    request: { body: jsonBody(BulkUpdate, { emailAccountIds: [1, 2], updateData: { messagePerDay: 40, minTimeToWaitInMins: 5, status: "ACTIVE", maxEmailPerDay: 20 } }) },
    responses: {
      200: json(Done.extend({ updated: z.number().int(), skipped_ids: z.array(z.number().int()) }), "Updated"),
      ...errorResponses(400, 401, 422, 429),
    },
  }),
  fetchReplies: createRoute({
    method: "post",
    path: "/api/v1/email-accounts/fetch-account-reply",
    operationId: "fetchEmailAccountReplies",
    summary: "Read every mailbox's inbox now (fetch replies now)",
    description:
      "Wakes the reader of each of the caller's mailboxes whose IMAP check passed, to read its INBOX at once rather than at its next poll; replies are recorded as they always are. Answers how many. A live fetch of the caller's started in the last 30 minutes whose reads have not all run yet → 406 `{\"message\":\"Live fetch is already in-progress. Please try later.\",\"error\":\"<same>\"}`.",
    tags,
    security,
    request: { body: optionalJsonBody(z.object({})) },
    responses: {
      200: json(Done, "Queued"),
      406: json(z.object({ message: z.string(), error: z.string() }), "A live fetch is still running"),
      ...errorResponses(401, 429),
    },
  }),
};

const LIVE_FETCH_WINDOW_MS = 30 * 60_000;
const LIVE_FETCH_RUNNING = "Live fetch is already in-progress. Please try later.";

// Deciding.

type UpdateData = z.infer<typeof UpdateData>;

/**
 * The stored columns of the fields that have one here. `warmupMinCount`, `sendWarmupsOnlyOnWeekdays`,
 * `useCustomDomain` and `dailyReplyLimit` are validated only: warmup (CONTRACT 19.1) adds their columns.
 */
function warmupChanges(data: UpdateData): MailboxChanges {
  return {
    warmupEnabled: data.status === undefined ? undefined : data.status === "ACTIVE",
    totalWarmupPerDay: data.warmupMaxCount ?? data.maxEmailPerDay,
    replyRatePercentage: data.replyRate,
    isRampupEnabled: data.isRampupEnabled,
    dailyRampup: data.rampupValue,
    autoAdjustWarmup: data.autoAdjustWarmup,
    warmupKeyId: data.warmupTagIdentifier,
    warmupMinCount: data.warmupMinCount,
    sendWarmupsOnlyOnWeekdays: data.sendWarmupsOnlyOnWeekdays,
    useCustomDomain: data.useCustomDomain,
    dailyReplyLimit: data.dailyReplyLimit,
  };
}

export const mailboxBulkRoutes = createRouter();

mailboxBulkRoutes.openapi(routes.byEmail, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const query = c.req.valid("query");
  const row = await visibleMailboxOfAddress(db, principal, query.email);
  if (!row) throw ApiError.notFound(MAILBOX_NOT_FOUND);
  return c.json(await mailboxReadAnswer(db, principal, config(c.env).warmup, row, query), 200);
});

mailboxBulkRoutes.openapi(routes.bulkUpdate, async (c) => {
  const db = database(c.env.DB);
  const principal = c.get("principal");
  const { emailAccountIds, updateData: data } = c.req.valid("json");
  const wanted = distinct(emailAccountIds);
  const states = await visibleWarmupStates(db, principal, wanted);
  const visible = new Set(states.map((row) => row.id));
  const ids = wanted.filter((id) => visible.has(id));
  const skipped = wanted.filter((id) => !visible.has(id));
  const tagIds = data.tags === undefined ? undefined : distinct(data.tags);
  if (tagIds !== undefined) {
    const usable = new Set(await visibleTagIds(db, principal, tagIds));
    const unknown = tagIds.find((id) => !usable.has(id));
    if (unknown !== undefined) throw ApiError.badRequest(`Tag not found: ${unknown}`);
  }
  const clientId = data.clientId === undefined ? undefined : await owningClient(db, principal, data.clientId);
  // Checked against the scope the mailboxes will have: a move and its new tags come in one request.
  if (tagIds !== undefined && ids.length) await refuseForeignTags(db, emailAccounts, ids, tagIds, clientId);
  let tracking: string | null | undefined;
  if (data.customTrackingDomain !== undefined) {
    const checked = await checkedTrackingDomain(data.customTrackingDomain ?? "", mailPolicy(config(c.env)));
    if ("problem" in checked) throw ApiError.validation([{ path: "updateData.customTrackingDomain", message: `customTrackingDomain ${checked.problem}` }]);
    tracking = checked.host || null;
  }
  const changes: MailboxChanges = {
    maxEmailPerDay: data.messagePerDay,
    timeToWaitInMins: data.minTimeToWaitInMins,
    fromName: data.fromName,
    signature: data.signature === undefined ? undefined : data.signature || null,
    customTrackingDomain: tracking,
    ...warmupChanges(data),
    clientId,
  };
  const defined = Object.fromEntries(Object.entries(changes).filter(([, value]) => value !== undefined)) as MailboxChanges;
  // 19.1's range against each mailbox's own maximum when only the minimum is given, as its warmup settings check it.
  const cramped = defined.totalWarmupPerDay === undefined && defined.warmupMinCount !== undefined ? states.find((row) => defined.warmupMinCount! > row.totalWarmupPerDay) : undefined;
  if (cramped) throw ApiError.badRequest(`warmupMinCount must not exceed total_warmup_per_day (${cramped.totalWarmupPerDay} for email account ${cramped.id})`);
  const each = states.flatMap((row) => {
    // A blocked warmup sent ACTIVE stays INACTIVE (CONTRACT 21): here only the unblock code or the mailbox's own switch lifts a block.
    const blocked = defined.warmupEnabled === true && !row.warmupEnabled && row.warmupBlockedReason !== null;
    // Otherwise as the mailbox's own switch does: the ramp restarts, a bounce clears, an identifier is generated where none is given or stored.
    const own: MailboxChanges = blocked ? { warmupEnabled: false } : warmupTurnedOn({ ...row, warmupKeyId: defined.warmupKeyId ?? row.warmupKeyId }, defined.warmupEnabled);
    // A smaller maximum pulls a stored minimum down with it.
    const max = defined.totalWarmupPerDay;
    if (max !== undefined && defined.warmupMinCount === undefined && row.warmupMinCount !== null && row.warmupMinCount > max) own.warmupMinCount = max;
    return Object.keys(own).length ? [{ id: row.id, changes: own }] : [];
  });
  if (ids.length) await updateMailboxes(db, c.env.DB, ids, { ...defined, updatedAt: new Date() }, tagIds, each);
  return c.json({ ok: true, message: "Email account(s) and warmup details are updated successfully!", updated: ids.length, skipped_ids: skipped }, 200);
});

mailboxBulkRoutes.openapi(routes.fetchReplies, async (c) => {
  const db = database(c.env.DB);
  const now = Date.now();
  const marked = await startLiveFetch(db, c.get("principal"), now - LIVE_FETCH_WINDOW_MS, now);
  if (marked === null) return c.json({ message: LIVE_FETCH_RUNNING, error: LIVE_FETCH_RUNNING }, 406);
  if (marked.length === 0) return c.json({ ok: true, message: "No email account found!" }, 200);
  await wakeMailboxes(c.env, marked, "read");
  return c.json({ ok: true, message: `${marked.length} Email account(s) are added to the queue to fetch live reply.` }, 200);
});
