import { createRoute, z } from "@hono/zod-openapi";
import { database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { API_KEY_SECURITY, createRouter, errorResponses, json, queryCount } from "../platform/openapi";
import { DELIVERABILITY } from "./shared";
import { findSpamTest } from "./store";
import { mailboxCounts, mailboxSummary } from "./mailbox-report-store";

/**
 * CONTRACT 21.6's mailbox reports: placement over every result of the caller's tests (or one
 * test's), and per sender mailbox and seed provider. Pending cells count nowhere until they settle.
 */

const TestFilter = {
  test_id: z.string().max(20).optional().openapi({ description: "One test only (a test of the caller's, else 404)" }),
  spamTestId: z.string().max(20).optional().openapi({ description: "Alias of `test_id`" }),
};

const MailboxCount = z
  .object({
    inbox_count: z.number().int(),
    spam_count: z.number().int(),
    tab_count: z.number().int(),
    failed_count: z.number().int().openapi({ description: "Not received by the deadline" }),
    total_email_count: z.number().int(),
  })
  .openapi("SpamTestMailboxCount");

const MailboxSummaryRow = z
  .object({
    id: z.string().openapi({ description: "`<email account id>:<provider_id>` (the sender's address in place of the id when it is no mailbox of the account)" }),
    from_email: z.string(),
    esp: z.string().openapi({ description: "The seed provider's name" }),
    total_email_count: z.number().int(),
    inbox_count: z.number().int(),
    tab_count: z.number().int(),
    spam_count: z.number().int(),
    failed_count: z.number().int(),
    placement_score: z.number().openapi({ description: "Inbox share in percent, one decimal" }),
  })
  .openapi("SpamTestMailboxSummaryRow");

const SummaryQuery = z.object({
  ...TestFilter,
  limit: queryCount(1, 100).default(20),
  offset: queryCount(0).default(0),
});

const tags = ["Deliverability"];
const COUNT_WORDS =
  "Placement over every settled result of the caller's spam tests (or one test's, with `test_id` or `spamTestId`): inbox, tab, spam and " +
  "failed (not received by the deadline); results still pending count nowhere. ";
const SUMMARY_WORDS =
  "One row per sender mailbox and seed provider over every settled result of the caller's spam tests (or one test's), by address then " +
  "provider; `placement_score` is the inbox share in percent. `limit` 1-100 (default 20), `offset`. ";

const routes = {
  count: createRoute({
    method: "get",
    path: "/api/v1/spam-test/report/mailboxes-count",
    operationId: "spamTestMailboxesCount",
    tags,
    summary: "Placement counts over all your spam tests' results (or one test's)",
    description: COUNT_WORDS + DELIVERABILITY,
    security: API_KEY_SECURITY,
    request: { query: z.object(TestFilter) },
    responses: { 200: json(MailboxCount, "The counts"), ...errorResponses(401, 404, 422, 429) },
  }),
  countDelivery: createRoute({
    method: "get",
    path: "/api/v1/smart-delivery/mailbox-count",
    operationId: "smartDeliveryMailboxCount",
    tags,
    summary: "Placement counts over all your spam tests' results (the /smart-delivery form)",
    description: `${COUNT_WORDS}The answer is \`{success, data}\`. ${DELIVERABILITY}`,
    security: API_KEY_SECURITY,
    request: { query: z.object(TestFilter) },
    responses: { 200: json(z.object({ success: z.boolean(), data: MailboxCount }), "The counts"), ...errorResponses(401, 404, 422, 429) },
  }),
  summary: createRoute({
    method: "get",
    path: "/api/v1/spam-test/report/mailboxes-summary",
    operationId: "spamTestMailboxesSummary",
    tags,
    summary: "Placement per sender mailbox and seed provider over your spam tests",
    description: SUMMARY_WORDS + DELIVERABILITY,
    security: API_KEY_SECURITY,
    request: { query: SummaryQuery },
    responses: { 200: json(z.array(MailboxSummaryRow), "One row per sender and provider"), ...errorResponses(401, 404, 422, 429) },
  }),
  summaryDelivery: createRoute({
    method: "get",
    path: "/api/v1/smart-delivery/mailbox-summary",
    operationId: "smartDeliveryMailboxSummary",
    tags,
    summary: "Placement per sender mailbox and seed provider (the /smart-delivery form)",
    description: `${SUMMARY_WORDS}The answer is \`{success, data}\`. ${DELIVERABILITY}`,
    security: API_KEY_SECURITY,
    request: { query: SummaryQuery },
    responses: { 200: json(z.object({ success: z.boolean(), data: z.array(MailboxSummaryRow) }), "One row per sender and provider"), ...errorResponses(401, 404, 422, 429) },
  }),
};

/** The test the filter names (404 unless the caller's), or null for all of them. */
async function testOf(db: ReturnType<typeof database>, principal: Principal, query: { test_id?: string; spamTestId?: string }): Promise<number | null> {
  const named = query.test_id ?? query.spamTestId;
  return named === undefined ? null : (await findSpamTest(db, principal, named)).id;
}

async function counts(db: ReturnType<typeof database>, principal: Principal, query: { test_id?: string; spamTestId?: string }) {
  const c = await mailboxCounts(db, principal, await testOf(db, principal, query));
  const [inbox, tab, spam, failed] = [c.inbox, c.tab, c.spam, c.failed].map(Number) as [number, number, number, number];
  return { inbox_count: inbox, spam_count: spam, tab_count: tab, failed_count: failed, total_email_count: inbox + tab + spam + failed };
}

async function summary(db: ReturnType<typeof database>, principal: Principal, query: z.output<typeof SummaryQuery>) {
  const rows = await mailboxSummary(db, principal, await testOf(db, principal, query), { limit: query.limit, offset: query.offset });
  return rows.map((row) => {
    const [inbox, tab, spam, failed] = [row.inbox, row.tab, row.spam, row.failed].map(Number) as [number, number, number, number];
    const total = inbox + tab + spam + failed;
    return {
      id: `${row.mailboxId ?? row.senderEmail}:${row.providerId}`,
      from_email: row.senderEmail,
      esp: row.providerName,
      total_email_count: total,
      inbox_count: inbox,
      tab_count: tab,
      spam_count: spam,
      failed_count: failed,
      placement_score: total === 0 ? 0 : Math.round((inbox / total) * 1000) / 10,
    };
  });
}

export const mailboxReportRoutes = createRouter();

mailboxReportRoutes.openapi(routes.count, async (c) => c.json(await counts(database(c.env.DB), c.get("principal"), c.req.valid("query")), 200));
mailboxReportRoutes.openapi(routes.countDelivery, async (c) => c.json({ success: true, data: await counts(database(c.env.DB), c.get("principal"), c.req.valid("query")) }, 200));
mailboxReportRoutes.openapi(routes.summary, async (c) => c.json(await summary(database(c.env.DB), c.get("principal"), c.req.valid("query")), 200));
mailboxReportRoutes.openapi(routes.summaryDelivery, async (c) => c.json({ success: true, data: await summary(database(c.env.DB), c.get("principal"), c.req.valid("query")) }, 200));
