import { createRoute, z } from "@hono/zod-openapi";
import type { Context } from "hono";
import { database } from "../platform/db";
import { TIME_UNITS } from "../db/schema";
import { cronFromObject, firstSlotWithin, isFiveFieldCron } from "./schedule";
import { isTimeZone, zoneOffset } from "../platform/zoned-time";
import type { AppEnv } from "../platform/env";
import { findCampaign, folderMayHold } from "../platform/access";
import { ApiError, type ValidationIssue } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody } from "../platform/openapi";
import { CreatedSpamTest, FOLDER_OF_ANOTHER_CLIENT, parseTestId, presentCreated, presentSingle, SingleSpamTest, SpamTestParams, type ProviderRow, type SpamTestRow, DELIVERABILITY } from "./shared";
import { offeredProviders, seedsOfProviders } from "./seed-store";
import { deleteSpamTests, findFolder, findSpamTest, insertSpamTest, listSpamTests, stopSpamTest } from "./store";

const numericId = z.union([z.number().int().positive(), z.string().regex(/^\d{1,15}$/).transform(Number)]);

const manualFields = {
  test_name: z.string().trim().min(1).max(255),
  description: z.string().max(5000).nullish(),
  spam_filters: z.union([z.boolean(), z.array(z.string().min(1).max(100)).max(50)]),
  link_checker: z.boolean().default(false),
  campaign_id: numericId,
  sequence_mapping_id: z.union([z.string().trim().min(1).max(64), z.number().int().nonnegative()]).transform(String),
  provider_ids: z
    .array(z.union([z.string().min(1).max(64), z.number().int().positive()]))
    .min(1)
    .max(50)
    .optional()
    .openapi({ description: "String provider ids, their provider_num, or its decimal string, mixed freely" }),
  provider_id: z.union([z.string().min(1).max(2000), z.number().int().positive()]).optional(),
  sender_accounts: z.array(z.email()).min(1).max(50),
  all_email_sent_without_time_gap: z.boolean().default(false),
  min_time_btwn_emails: z.number().int().min(1).max(100_000).default(10),
  min_time_unit: z.enum(TIME_UNITS).default("minutes"),
  is_warmup: z.boolean().default(false),
  folder_id: numericId.nullish(),
};

const providersGiven = {
  check: (body: { provider_ids?: unknown[]; provider_id?: unknown }) => body.provider_ids !== undefined || body.provider_id !== undefined,
  message: { message: "provider_ids is required", path: ["provider_ids"] },
};

const ManualTest = z.object(manualFields).refine(providersGiven.check, providersGiven.message).openapi("CreateManualSpamTest");

const HH_MM = /^([01]\d|2[0-3]):[0-5]\d$/;
/** Weekdays 0-6 with 0 = Sunday; 7 is also read as Sunday (jean documents 1-7 with 1 = Monday). */
const weekdays = z
  .array(z.number().int().min(0).max(7))
  .min(1)
  .max(8)
  .transform((days) => [...new Set(days.map((day) => day % 7))]);
const clock = z.string().regex(HH_MM, "Must be HH:MM");
const ScheduleObject = z.object({
  tz: z.string().refine(isTimeZone, "Must be an IANA time zone name").optional(),
  days: weekdays.optional(),
  startHour: clock.optional(),
  endHour: clock.optional(),
});

const ScheduledTest = z
  .object({
    ...manualFields,
    schedule_start_time: instant().refine((value) => Date.parse(value) >= Date.now() - 60_000, "schedule_start_time must not be in the past"),
    test_end_date: z.union([instant(), z.iso.date()]),
    every_days: z.number().int().min(1).max(30).default(1),
    scheduler_cron_value: z.union([z.string().refine(isFiveFieldCron, "Must be a five-field cron expression"), ScheduleObject]).optional(),
    tz: z.string().refine(isTimeZone, "Must be an IANA time zone name").optional(),
    days: weekdays.optional().openapi({ description: "Read when scheduler_cron_value is absent or has no startHour (compat rule C3)" }),
    startHour: clock.optional().openapi({ description: "As days" }),
    starHour: clock.optional().openapi({ description: "The old reference's spelling of startHour" }),
    endHour: clock.optional().openapi({ description: "As days" }),
  })
  .refine(providersGiven.check, providersGiven.message)
  .refine((body) => Date.parse(body.test_end_date) > Date.parse(body.schedule_start_time), {
    message: "test_end_date must be after schedule_start_time",
    path: ["test_end_date"],
  })
  .openapi("CreateScheduledSpamTest");

type ManualBody = z.infer<typeof ManualTest>;

const CreatedAnswer = json(CreatedSpamTest, "The new spam test");
const tags = ["Deliverability"];

const routes = {
  manual: createRoute({
    method: "post",
    path: "/api/v1/spam-test/manual",
    operationId: "createManualSpamTest",
    description: "Creates a one-off test: send the campaign's email to the answered `seed_emails`, then read the reports. `provider_ids` (string " +
      "ids or numbers; unknown → 422 listing the valid ones), `sender_accounts` (1–50), the caller's `campaign_id` (foreign → 404). " + DELIVERABILITY,
    tags,
    summary: "Create a manual spam test (send to the returned seed inboxes)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(ManualTest, {
          test_name: "January check",
          spam_filters: true,
          link_checker: false,
          campaign_id: 1,
          sequence_mapping_id: 1,
          provider_ids: ["gmail", "outlook"],
          sender_accounts: ["sender@yourdomain.example"],
        }) },
    responses: { 200: CreatedAnswer, ...errorResponses(400, 401, 404, 422, 429) },
  }),
  schedule: createRoute({
    method: "post",
    path: "/api/v1/spam-test/schedule",
    operationId: "createScheduledSpamTest",
    description: "A recurring test: the manual body plus `schedule_start_time`, `test_end_date` (after start), `every_days` (1–30) and " +
      "`scheduler_cron_value` (a cron string, or `{tz, days, startHour}`; top-level `tz`, `days`, `startHour` are read too). A cron " +
      "starts each due run. " + DELIVERABILITY,
    tags,
    summary: "Create a scheduled (recurring) spam test",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(ScheduledTest, {
          test_name: "Weekly check",
          spam_filters: true,
          campaign_id: 1,
          sequence_mapping_id: 1,
          provider_ids: ["gmail", "outlook"],
          sender_accounts: ["sender@yourdomain.example"],
          schedule_start_time: "2030-01-06T09:00:00Z",
          test_end_date: "2030-03-31T00:00:00Z",
          every_days: 7,
          scheduler_cron_value: { tz: "Europe/Berlin", days: [1], startHour: "09:00" },
        }) },
    responses: { 200: CreatedAnswer, ...errorResponses(400, 401, 404, 422, 429) },
  }),
  read: createRoute({
    method: "get",
    path: "/api/v1/spam-test/{spamTestId}",
    operationId: "getSpamTest",
    description: "A test with its settings and status (`active`, `completed`, `stopped`). " + DELIVERABILITY,
    tags,
    summary: "Read a spam test",
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams },
    responses: { 200: json(SingleSpamTest, "The spam test"), ...errorResponses(401, 404, 429) },
  }),
  list: createRoute({
    method: "post",
    path: "/api/v1/spam-test/report",
    operationId: "listSpamTests",
    description: "The caller's tests, newest first, paged by `{limit, offset}`; `testType` manual|automated (auto) narrows. " + DELIVERABILITY,
    tags,
    summary: "List spam tests, newest first",
    security: API_KEY_SECURITY,
    request: {
      query: z.object({
        testType: z
          .enum(["manual", "automated", "auto"])
          .transform((value) => (value === "auto" ? "automated" : value))
          .optional()
          .openapi({ description: "`auto` (the hosted list's word) reads as automated" }),
      }),
      body: jsonBody(
        z.object({ limit: z.number().int().min(1).max(100).default(20), offset: z.number().int().min(0).default(0) }).openapi("ListSpamTests"), { limit: 10, offset: 0 },
      ),
    },
    responses: {
      200: json(
        z.object({ success: z.boolean(), data: z.array(CreatedSpamTest.omit({ seed_emails: true })), total_count: z.number().int(), limit: z.number().int(), offset: z.number().int() }),
        "One page of tests",
      ),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
  stop: createRoute({
    method: "put",
    path: "/api/v1/spam-test/{spamTestId}/stop",
    operationId: "stopSpamTest",
    description: "Stops a test: status `stopped`, no further runs. " + DELIVERABILITY,
    tags,
    summary: "Stop a spam test (no further runs)",
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams },
    responses: {
      200: json(z.object({ success: z.boolean(), data: z.object({ id: z.string(), status: z.string() }) }), "Stopped"),
      ...errorResponses(401, 404, 429),
    },
  }),
  remove: createRoute({
    method: "post",
    path: "/api/v1/spam-test/delete",
    operationId: "deleteSpamTests",
    description: "Deletes the tests `spamTestIds`. " + DELIVERABILITY,
    tags,
    summary: "Delete spam tests",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(z.object({ spamTestIds: z.array(z.union([z.string(), z.number()])).min(1).max(100) }).openapi("DeleteSpamTests"), { spamTestIds: [1] }) },
    responses: { 200: json(z.object({ success: z.boolean(), deleted: z.number().int() }), "Deleted"), ...errorResponses(401, 404, 422, 429) },
  }),
};

/**
 * Provider ids from the list (or the comma-separated `provider_id`), all of them in the catalogue. A
 * number, or a string of digits, is a `provider_num` (compat rule C2); answers carry the string ids.
 */
function chosenProviders(body: ManualBody, catalogue: ProviderRow[]): string[] {
  const field = body.provider_ids ? "provider_ids" : "provider_id";
  const given = body.provider_ids ?? String(body.provider_id!).split(",").map((id) => id.trim()).filter(Boolean);
  const byId = new Map(catalogue.map((row) => [row.id, row.id]));
  const byNum = new Map(catalogue.flatMap((row) => (row.providerNum === null ? [] : [[String(row.providerNum), row.id] as const])));
  const issues: ValidationIssue[] = [];
  const ids = given.map((raw, index) => {
    const key = String(raw);
    const id = byId.get(key) ?? byNum.get(key);
    if (id === undefined) issues.push({ path: field === "provider_ids" ? `provider_ids.${index}` : "provider_id", message: `Unknown provider ${key}` });
    return id;
  });
  if (issues.length) {
    const valid = catalogue.map((row) => `${row.id} (${row.providerNum})`).join(", ");
    throw ApiError.validation(issues.map((issue) => ({ ...issue, message: `${issue.message}; valid providers: ${valid}` })));
  }
  if (ids.length === 0) throw ApiError.validation([{ path: field, message: "At least one provider is required" }]);
  return [...new Set(ids as string[])];
}

interface Schedule {
  start: number;
  end: number;
  everyDays: number;
  cron: string;
  timeZone: string;
}

/**
 * Stores a test with its senders (a manual test with its one run, an automated one with its first
 * slot, or completed when its window holds none); answers it with its providers' seed addresses.
 * Only providers with a seed mailbox are offered (the same list as `spam-test/seed/providers`).
 */
async function createTest(c: Context<AppEnv>, body: ManualBody, schedule: Schedule | null) {
  const principal = c.get("principal");
  const db = database(c.env.DB);
  const campaign = await findCampaign(db, principal, body.campaign_id);
  const folder = body.folder_id == null ? null : await findFolder(db, principal, body.folder_id);
  if (folder && !folderMayHold(folder, campaign.clientId)) throw ApiError.badRequest(FOLDER_OF_ANOTHER_CLIENT);
  const catalogue = await offeredProviders(db);
  const providerIds = chosenProviders(body, catalogue);
  const now = Date.now();
  const firstSlot = schedule && firstSlotWithin(schedule.cron, schedule.timeZone, schedule.start, schedule.end);
  const senders = [...new Set(body.sender_accounts.map((email) => email.toLowerCase()))];

  const id = await insertSpamTest(
    c.env.DB,
    {
      accountId: principal.accountId,
      clientId: campaign.clientId,
      campaignId: campaign.id,
      folderId: folder?.id ?? null,
      testName: body.test_name,
      description: body.description ?? null,
      testType: schedule ? "automated" : "manual",
      spamFilters: Array.isArray(body.spam_filters) ? body.spam_filters.length > 0 : body.spam_filters,
      spamFilterNames: Array.isArray(body.spam_filters) ? body.spam_filters : [],
      linkChecker: body.link_checker,
      sequenceMappingId: body.sequence_mapping_id,
      providerIds,
      allEmailSentWithoutTimeGap: body.all_email_sent_without_time_gap,
      minTimeBtwnEmails: body.min_time_btwn_emails,
      minTimeUnit: body.min_time_unit,
      isWarmup: body.is_warmup,
      status: schedule && firstSlot === null ? "completed" : "active",
      emailTrackId: crypto.randomUUID(),
      scheduleStartTime: schedule ? new Date(schedule.start) : null,
      testEndDate: schedule ? new Date(schedule.end) : null,
      everyDays: schedule?.everyDays ?? null,
      schedulerCronValue: schedule?.cron ?? null,
      timeZone: schedule?.timeZone ?? null,
      nextRunAt: firstSlot === null ? null : new Date(firstSlot),
      createdAt: new Date(now),
      updatedAt: new Date(now),
    },
    senders,
    schedule === null,
    now,
  );
  const row = await findSpamTest(db, principal, id);
  return { row, seeds: await seedsOfProviders(db, row.providerIds) };
}

/** The creation answer: the test, and every seed address of its providers (where the user sends it, with the token). */
function withSeeds({ row, seeds }: { row: SpamTestRow; seeds: { providerId: string; email: string }[] }) {
  return { ...presentCreated(row), seed_emails: seeds.map((seed) => ({ provider_id: seed.providerId, email: seed.email })) };
}

export const spamTestRoutes = createRouter();

spamTestRoutes.openapi(routes.manual, async (c) => {
  return c.json(withSeeds(await createTest(c, c.req.valid("json"), null)), 200);
});

type ScheduledBody = z.infer<typeof ScheduledTest>;

/**
 * The cron and zone of a scheduled test. A string `scheduler_cron_value` is the cron; otherwise the
 * object's fields, then the top-level ones (compat rule C3), build it: no hour = the hour and minute of
 * `schedule_start_time` in the zone, no days = every day, no zone = UTC.
 */
function cronOf(body: ScheduledBody): { cron: string; timeZone: string } {
  const given = body.scheduler_cron_value;
  const object = typeof given === "object" ? given : {};
  const timeZone = body.tz ?? object.tz ?? "UTC";
  if (typeof given === "string") return { cron: given.trim(), timeZone };
  const startHour = object.startHour ?? body.startHour ?? body.starHour;
  const days = object.days ?? body.days;
  const endHour = object.endHour ?? body.endHour;
  if (given === undefined && body.tz === undefined && days === undefined && startHour === undefined && endHour === undefined) {
    throw ApiError.validation([{ path: "scheduler_cron_value", message: "scheduler_cron_value is required (or tz, days and startHour)" }]);
  }
  const start = Date.parse(body.schedule_start_time);
  const wall = new Date(start + zoneOffset(start, timeZone));
  const fromStart = `${String(wall.getUTCHours()).padStart(2, "0")}:${String(wall.getUTCMinutes()).padStart(2, "0")}`;
  return { cron: cronFromObject({ days: days ?? [0, 1, 2, 3, 4, 5, 6], startHour: startHour ?? fromStart, endHour }), timeZone };
}

spamTestRoutes.openapi(routes.schedule, async (c) => {
  const body = c.req.valid("json");
  const { cron, timeZone } = cronOf(body);
  const created = await createTest(c, body, {
    start: Date.parse(body.schedule_start_time),
    end: Date.parse(body.test_end_date),
    everyDays: body.every_days,
    cron,
    timeZone,
  });
  return c.json(withSeeds(created), 200);
});

spamTestRoutes.openapi(routes.list, async (c) => {
  const { testType } = c.req.valid("query");
  const { limit, offset } = c.req.valid("json");
  const { rows, total } = await listSpamTests(database(c.env.DB), c.get("principal"), { testType, limit, offset });
  return c.json({ success: true, data: rows.map(presentCreated), total_count: total, limit, offset }, 200);
});

spamTestRoutes.openapi(routes.remove, async (c) => {
  const ids = c.req.valid("json").spamTestIds.map(parseTestId).filter((id): id is number => id !== null);
  const deleted = await deleteSpamTests(database(c.env.DB), c.get("principal"), ids);
  return c.json({ success: true, deleted }, 200);
});

spamTestRoutes.openapi(routes.read, async (c) => {
  const row = await findSpamTest(database(c.env.DB), c.get("principal"), c.req.valid("param").spamTestId);
  return c.json(presentSingle(row), 200);
});

spamTestRoutes.openapi(routes.stop, async (c) => {
  const db = database(c.env.DB);
  const row = await findSpamTest(db, c.get("principal"), c.req.valid("param").spamTestId);
  await stopSpamTest(db, row.id, new Date());
  return c.json({ success: true, data: { id: String(row.id), status: "stopped" } }, 200);
});
