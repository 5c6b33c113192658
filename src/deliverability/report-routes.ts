import { createRoute, z } from "@hono/zod-openapi";
import { database, type Database } from "../platform/db";
import { PLACEMENT_FOLDERS } from "../db/schema";
import { adjustedTotal, countByProvider, emptyCounts, sumCounts } from "./placement-report";
import { iso } from "../platform/time";
import type { Principal } from "../platform/principal";
import { ApiError, type ValidationIssue } from "../platform/errors";
import { API_KEY_SECURITY, createRouter, errorResponses, instant, json, jsonBody } from "../platform/openapi";
import { placementCounts, SpamTestParams, type SpamTestRow, DELIVERABILITY } from "./shared";
import { DKIM_RESULTS, DMARC_RESULTS, SPF_RESULTS } from "./findings";
import { folderCounts, listRuns, recordPlacements, runExists, type Findings } from "./report-store";
import { findSpamTest, listProviders, listSenders } from "./store";

const SenderAccount = z
  .object({
    id: z.string(),
    spam_test_id: z.string(),
    from_email: z.string(),
    created_at: z.string(),
    updated_at: z.string(),
    client_id: z.string().nullable(),
    user_id: z.string(),
  })
  .openapi("SenderAccount");

/** An Authentication-Results verdict: one of the method's words, in any case (RFC 8601 result keywords are case-insensitive). */
const verdict = (words: readonly [string, ...string[]]) => z.string().trim().toLowerCase().pipe(z.enum(words)).optional();

const SpamSymbolInput = z.object({
  name: z.string().trim().min(1).max(128),
  score: z.number().min(-10_000).max(10_000),
  description: z.string().max(1000).optional(),
});

const LinkCheckInput = z.object({
  url: z.url({ protocol: /^https?$/ }).max(2048),
  status: z.number().int().min(100).max(599).nullable(),
  final_url: z.string().max(2048).nullable(),
  redirects: z.number().int().min(0).max(50),
  ok: z.boolean(),
  error: z.string().max(500).optional(),
});

/** The findings a result may carry: what the checker (Salvo's or an operator's) saw on the seed's copy. */
const findingFields = {
  mailbox_folder: z.string().trim().min(1).max(255).optional().openapi({ description: "The seed mailbox's own folder name, e.g. [Gmail]/Spam" }),
  message_id: z.string().trim().min(1).max(998).optional(),
  spam_score: z.number().min(-10_000).max(10_000).optional(),
  spam_required: z.number().min(-10_000).max(10_000).optional().openapi({ description: "The filter's spam threshold" }),
  spam_action: z.string().trim().min(1).max(64).optional().openapi({ description: "The filter's action, e.g. Rspamd's `no action` or `add header`" }),
  spam_symbols: z.array(SpamSymbolInput).max(500).optional(),
  spf: verdict(SPF_RESULTS),
  dkim: verdict(DKIM_RESULTS),
  dmarc: verdict(DMARC_RESULTS),
  sender_ip: z.union([z.ipv4(), z.ipv6()]).optional().openapi({ description: "The connecting IP of the first hop outside the sender" }),
  sender_host: z.string().trim().min(1).max(255).optional(),
  link_report: z.array(LinkCheckInput).max(200).optional(),
};

const RecordResults = z
  .object({
    run_no: z.number().int().positive().optional(),
    results: z
      .array(
        z.object({
          provider_id: z.string().min(1).max(64),
          sender_email: z.email(),
          seed_email: z.string().max(320).optional(),
          folder: z.enum(PLACEMENT_FOLDERS),
          received_at: instant().optional(),
          ...findingFields,
        }),
      )
      .min(1)
      .max(1000),
  })
  .openapi("RecordPlacementResults");

type ResultInput = z.infer<typeof RecordResults>["results"][number];

const testIdField = z.union([z.string(), z.number()]);
/** A report request naming its test in the body (any of the clients' three spellings) and optionally a run. */
export const ProviderReportRequest = z
  .object({
    spam_test_id: testIdField.optional(),
    spamTestId: testIdField.optional(),
    test_id: testIdField.optional(),
    run_no: z.number().int().positive().optional(),
  })
  .refine((b) => b.spam_test_id !== undefined || b.spamTestId !== undefined || b.test_id !== undefined, {
    message: "spam_test_id is required",
    path: ["spam_test_id"],
  })
  .openapi("ProviderReportRequest");

const ProviderRow = z.object({
  provider_id: z.string(),
  provider_name: z.string(),
  region: z.string(),
  ...placementCounts,
  total_count: z.number().int(),
});

const tags = ["Deliverability"];
const routes = {
  senders: createRoute({
    method: "get",
    path: "/api/v1/spam-test/report/{spamTestId}/sender-accounts",
    operationId: "listSpamTestSenderAccounts",
    description: "The sender accounts of a test. " + DELIVERABILITY,
    tags,
    summary: "The sender accounts of a spam test",
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams },
    responses: { 200: json(z.array(SenderAccount), "Sender accounts"), ...errorResponses(401, 404, 429) },
  }),
  results: createRoute({
    method: "post",
    path: "/api/v1/spam-test/{spamTestId}/results",
    operationId: "recordSpamTestResults",
    "x-salvo-extension": true,
    tags,
    summary: "Record where test emails landed (placement checker)",
    description:
      "Where each sender's message landed at each provider in a run (default: the latest), with what the checker found on the seed's copy: spam filter score and symbols, SPF/DKIM/DMARC verdicts, the sending hop, the links followed. A later result for the same provider and sender replaces the earlier one, findings included.",
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams, body: jsonBody(RecordResults, { results: [{ provider_id: "gmail", sender_email: "sender@yourdomain.example", folder: "inbox" }] }) },
    responses: { 200: json(z.object({ ok: z.boolean(), recorded: z.number().int() }), "Recorded"), ...errorResponses(400, 401, 404, 422, 429) },
  }),
  providerReport: createRoute({
    method: "post",
    path: "/api/v1/smart-delivery/provider-report",
    operationId: "getProviderReport",
    description: "Placement per provider for a run of a test (default: the latest): `spam_test_id` (or `spamTestId`, `test_id`), `run_no?`. " + DELIVERABILITY,
    tags,
    summary: "Placement per provider for a run (default: the latest)",
    security: API_KEY_SECURITY,
    request: { body: jsonBody(ProviderReportRequest, { spam_test_id: 1 }) },
    responses: {
      200: json(
        z.object({
          success: z.boolean(),
          data: z.object({
            spam_test_id: z.string(),
            status: z.string(),
            run_no: z.number().int(),
            overall_total_count: z.number().int(),
            providers: z.array(ProviderRow),
          }),
        }),
        "The report",
      ),
      ...errorResponses(401, 404, 422, 429),
    },
  }),
  providerwise: createRoute({
    method: "post",
    path: "/api/v1/spam-test/report/{spamTestId}/providerwise",
    operationId: "getProviderwiseReport",
    description: "Placement per provider in the hosted service's report form. " + DELIVERABILITY,
    tags,
    summary: "Placement per provider (the hosted service's report form)",
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams },
    responses: {
      200: json(
        z.object({
          overallTotalCount: z.number().int(),
          status: z.string(),
          result: z.array(
            z.object({
              provider_id: z.string(),
              provider_name: z.string(),
              group_id: z.string(),
              region_id: z.string(),
              inbox_count: z.number().int(),
              tab_count: z.number().int(),
              spam_count: z.number().int(),
              adjusted_total_email_count: z.number().int(),
            }),
          ),
        }),
        "The report",
      ),
      ...errorResponses(401, 404, 429),
    },
  }),
  history: createRoute({
    method: "get",
    path: "/api/v1/spam-test/report/{spamTestId}/schedule-history",
    operationId: "getSpamTestScheduleHistory",
    description: "Every run of a test with its placement counts. " + DELIVERABILITY,
    tags,
    summary: "Every run of a test with its placement counts",
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams },
    responses: {
      200: json(
        z.object({
          success: z.boolean(),
          data: z.array(
            z.object({
              run_no: z.number().int(),
              scheduled_at: z.string(),
              started_at: z.string(),
              ...placementCounts,
              pending_count: z.number().int(),
              total_count: z.number().int(),
            }),
          ),
        }),
        "Runs, oldest first",
      ),
      ...errorResponses(401, 404, 429),
    },
  }),
};

/** A test's placement per provider (in the test's provider order) in one run, the latest by default. */
async function providerReport(db: Database, principal: Principal, id: string | number, runNo?: number) {
  const test = await findSpamTest(db, principal, id);
  const run = runNo ?? test.testRunNo;
  const counts = countByProvider(await folderCounts(db, test.id, run));
  const catalogue = new Map((await listProviders(db)).map((p) => [p.id, p]));
  const providers = test.providerIds.map((id) => ({ id, provider: catalogue.get(id)!, counts: counts.get(id) ?? emptyCounts() }));
  return { test, run, providers };
}

export function requestedTestId(body: z.infer<typeof ProviderReportRequest>): string | number {
  return (body.spam_test_id ?? body.spamTestId ?? body.test_id)!;
}

export const reportRoutes = createRouter();

reportRoutes.openapi(routes.senders, async (c) => {
  const db = database(c.env.DB);
  const test = await findSpamTest(db, c.get("principal"), c.req.valid("param").spamTestId);
  const rows = await listSenders(db, test.id);
  return c.json(
    rows.map((row) => ({
      id: String(row.id),
      spam_test_id: String(test.id),
      from_email: row.fromEmail,
      created_at: iso(row.createdAt),
      updated_at: iso(row.updatedAt),
      client_id: test.clientId === null ? null : String(test.clientId),
      user_id: String(test.accountId),
    })),
    200,
  );
});

/** Every result must name one of the test's providers and senders, in an existing run. */
async function checkResults(db: Database, test: SpamTestRow, body: z.infer<typeof RecordResults>, run: number) {
  const senders = new Set((await listSenders(db, test.id)).map((r) => r.fromEmail));
  const issues: ValidationIssue[] = [];
  body.results.forEach((result, index) => {
    if (!test.providerIds.includes(result.provider_id)) issues.push({ path: `results.${index}.provider_id`, message: "Not a provider of this test" });
    if (!senders.has(result.sender_email.toLowerCase())) issues.push({ path: `results.${index}.sender_email`, message: "Not a sender of this test" });
    const finding = Object.keys(findingFields).find((key) => result[key as keyof typeof findingFields] !== undefined);
    if (result.folder === "not_received" && finding) issues.push({ path: `results.${index}.${finding}`, message: "A message that was not received has no findings" });
  });
  if (issues.length) throw ApiError.validation(issues);
  if (!(await runExists(db, test.id, run))) throw ApiError.badRequest(`Run ${run} of this test has not started`);
}

function findingsOf(r: ResultInput): Findings {
  return {
    mailboxFolder: r.mailbox_folder,
    messageId: r.message_id,
    spamScore: r.spam_score,
    spamRequired: r.spam_required,
    spamAction: r.spam_action,
    spamSymbols: r.spam_symbols,
    spf: r.spf,
    dkim: r.dkim,
    dmarc: r.dmarc,
    senderIp: r.sender_ip,
    senderHost: r.sender_host,
    linkReport: r.link_report,
  };
}

reportRoutes.openapi(routes.results, async (c) => {
  const db = database(c.env.DB);
  const test = await findSpamTest(db, c.get("principal"), c.req.valid("param").spamTestId);
  const body = c.req.valid("json");
  const run = body.run_no ?? test.testRunNo;
  await checkResults(db, test, body, run);
  const placements = body.results.map((r) => ({
    providerId: r.provider_id,
    senderEmail: r.sender_email.toLowerCase(),
    seedEmail: r.seed_email ?? null,
    folder: r.folder,
    receivedAt: r.received_at ? Date.parse(r.received_at) : null,
    ...findingsOf(r),
  }));
  await recordPlacements(c.env.DB, test.id, run, placements, Date.now());
  return c.json({ ok: true, recorded: placements.length }, 200);
});

reportRoutes.openapi(routes.providerReport, async (c) => {
  const body = c.req.valid("json");
  const id = requestedTestId(body);
  const { test, run, providers } = await providerReport(database(c.env.DB), c.get("principal"), id, body.run_no);
  return c.json(
    {
      success: true,
      data: {
        spam_test_id: String(test.id),
        status: test.status,
        run_no: run,
        overall_total_count: providers.reduce((sum, p) => sum + p.counts.total_count, 0),
        providers: providers.map(({ id, provider, counts }) => ({
          provider_id: id,
          provider_name: provider.name,
          region: provider.regionName,
          inbox_count: counts.inbox_count,
          tab_count: counts.tab_count,
          spam_count: counts.spam_count,
          not_received_count: counts.not_received_count,
          total_count: counts.total_count,
        })),
      },
    },
    200,
  );
});

reportRoutes.openapi(routes.providerwise, async (c) => {
  const { test, providers } = await providerReport(database(c.env.DB), c.get("principal"), c.req.valid("param").spamTestId);
  return c.json(
    {
      overallTotalCount: providers.reduce((sum, p) => sum + p.counts.total_count, 0),
      status: test.status,
      result: providers.map(({ id, provider, counts }) => ({
        provider_id: id,
        provider_name: provider.name,
        group_id: provider.groupId,
        region_id: provider.regionId,
        inbox_count: counts.inbox_count,
        tab_count: counts.tab_count,
        spam_count: counts.spam_count,
        adjusted_total_email_count: adjustedTotal(counts),
      })),
    },
    200,
  );
});

reportRoutes.openapi(routes.history, async (c) => {
  const db = database(c.env.DB);
  const test = await findSpamTest(db, c.get("principal"), c.req.valid("param").spamTestId);
  const runs = await listRuns(db, test.id);
  const counts = await folderCounts(db, test.id);
  return c.json(
    {
      success: true,
      data: runs.map((run) => {
        const totals = sumCounts(countByProvider(counts.filter((r) => r.runNo === run.runNo)).values());
        return { run_no: run.runNo, scheduled_at: iso(run.slotAt), started_at: iso(run.startedAt), ...totals };
      }),
    },
    200,
  );
});
