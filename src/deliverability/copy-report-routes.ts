import { createRoute, z } from "@hono/zod-openapi";
import { config } from "../config";
import { database, type Database } from "../platform/db";
import { ApiError } from "../platform/errors";
import type { Principal } from "../platform/principal";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, queryCount } from "../platform/openapi";
import { headerObject } from "./copy-headers";
import { copiesOfRun, copyOfTest, runMessage, type CopyRow } from "./copy-report-store";
import { rdnsOf } from "./rdns";
import { DELIVERABILITY, parseTestId, SpamTestParams } from "./shared";
import { findSpamTest } from "./store";

/**
 * CONTRACT 21.6's reports on the seeds' copies: the reverse DNS of the IP each copy came from, and
 * a copy's headers as they arrived (the checker keeps each copy's header block).
 */

const tags = ["Deliverability"];
const NOT_RECEIVED = "No copy of this message was received";

const SeedRdns = z.object({
  id: z.string().openapi({ description: "The result's id (as in sender-account-wise)" }),
  email: z.string().openapi({ description: "The seed address" }),
  esp: z.string().openapi({ description: "The seed provider's name" }),
  rdns_verified: z.boolean().nullable().openapi({ description: "The PTR name's A/AAAA include the IP (false: they do not, or no PTR); null: unknown" }),
  ip: z.string().nullable(),
  ptr: z.string().nullable(),
  rdns_source: z.enum(["received_header", "ptr_query", "unknown"]),
});
const RdnsRow = z.object({ from_email: z.string(), seed_accounts: z.array(SeedRdns) }).openapi("SpamTestRdnsRow");

const Headers = z.record(z.string(), z.union([z.string(), z.array(z.string())])).openapi("SeedCopyHeaders");
const ReplyHeaders = z.object({ reply_id: z.string(), seed_email: z.string(), headers: Headers }).openapi("SeedCopyReplyHeaders");

const EmailContent = z
  .object({
    spamTest: z.string().openapi({ description: "The test's id" }),
    subject: z.string(),
    text: z.string(),
    html: z.string().nullable(),
    rawEmailContent: z.string().nullable().openapi({ description: "The RFC 5322 source handed to the SMTP server (null when larger than 1 MB)" }),
  })
  .openapi("SpamTestEmailContent");
const NO_CONTENT = "No email of this run was sent by Salvo";
const CONTENT_WORDS =
  "The email of a run (default the latest) as Salvo's sending mailbox handed it to the SMTP server (its first cell; the others differ only in " +
  "recipient, sender and Message-ID): subject, text and HTML parts, and the raw RFC 5322 source. Manual tests' runs, which their user sends, " +
  `and runs not sent yet have none: 404 \`${NO_CONTENT}\`. `;
const RunQuery = z.object({ run_no: queryCount(1).optional().openapi({ description: "The run (default: the latest)" }) });
const RDNS_WORDS =
  "Per sender, per seed: the IP that handed the email to the seed's provider (its first Received header; else the sending hop the checker recorded), " +
  "the PTR name that header's reverse lookup gives (`rdns_source: received_header`) or else a PTR query through the configured resolver " +
  "(`ptr_query`), and whether the name's A/AAAA include the IP. No copy, no IP, no resolver or no answer from it: null and `unknown`, never a guess. ";
const HEADER_WORDS = "The seed copy's headers as they arrived, in order, each name as written; a name that repeats (Received) gives an array. ";

const routes = {
  rdns: createRoute({
    method: "get",
    path: "/api/v1/spam-test/report/{spamTestId}/rdns-details",
    operationId: "spamTestReportRdnsDetails",
    tags,
    summary: "Reverse DNS of the IP each seed's copy came from",
    description: RDNS_WORDS + DELIVERABILITY,
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams, query: RunQuery },
    responses: { 200: json(z.array(RdnsRow), "Per sender"), ...errorResponses(401, 404, 422, 429) },
  }),
  rdnsDelivery: createRoute({
    method: "post",
    path: "/api/v1/smart-delivery/rdns",
    operationId: "smartDeliveryRdns",
    tags,
    summary: "Reverse DNS of the IP each seed's copy came from (the /smart-delivery form)",
    description: `${RDNS_WORDS}The test is named by \`test_id\`; the answer is \`{success, data}\`. ${DELIVERABILITY}`,
    security: API_KEY_SECURITY,
    request: {
      body: jsonBody(
        z.object({ test_id: z.union([z.string().max(20), z.number().int()]), run_no: z.number().int().positive().optional() }).openapi("SmartDeliveryRdnsRequest"),
        { test_id: 12 },
      ),
    },
    responses: { 200: json(z.object({ success: z.boolean(), data: z.array(RdnsRow) }), "Per sender"), ...errorResponses(401, 404, 422, 429) },
  }),
  headers: createRoute({
    method: "get",
    path: "/api/v1/spam-test/report/{spamTestId}/sender-account-wise/{replyId}/email-headers",
    operationId: "spamTestReportEmailHeaders",
    tags,
    summary: "The headers of one seed's copy of a test email",
    description: `${HEADER_WORDS}\`replyId\` is a result id of \`sender-account-wise\`. Not received → 404 \`${NOT_RECEIVED}\`. ${DELIVERABILITY}`,
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams.extend({ replyId: z.string().openapi({ param: { name: "replyId", in: "path" }, example: "41" }) }) },
    responses: { 200: json(Headers, "The headers"), ...errorResponses(401, 404, 422, 429) },
  }),
  headersDelivery: createRoute({
    method: "get",
    path: "/api/v1/smart-delivery/reply-headers",
    operationId: "smartDeliveryReplyHeaders",
    tags,
    summary: "The headers of every received seed copy of a test run (the /smart-delivery form)",
    description: `${HEADER_WORDS}One entry per received copy of the run (default the latest) whose headers were kept; the answer is \`{success, data}\`. ${DELIVERABILITY}`,
    security: API_KEY_SECURITY,
    request: { query: z.object({ test_id: z.string().max(20), run_no: queryCount(1).optional() }) },
    responses: { 200: json(z.object({ success: z.boolean(), data: z.array(ReplyHeaders) }), "Per received copy"), ...errorResponses(401, 404, 422, 429) },
  }),
  content: createRoute({
    method: "get",
    path: "/api/v1/spam-test/report/{spamTestId}/email-content",
    operationId: "spamTestReportEmailContent",
    tags,
    summary: "The email a spam-test run sent, as handed to the mail server",
    description: CONTENT_WORDS + DELIVERABILITY,
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams, query: RunQuery },
    responses: { 200: json(EmailContent, "The email"), ...errorResponses(401, 404, 422, 429) },
  }),
  contentDelivery: createRoute({
    method: "get",
    path: "/api/v1/smart-delivery/email-content",
    operationId: "smartDeliveryEmailContent",
    tags,
    summary: "The email a spam-test run sent (the /smart-delivery form)",
    description: `${CONTENT_WORDS}The test is named by \`test_id\`; the answer is \`{success, data}\`. ${DELIVERABILITY}`,
    security: API_KEY_SECURITY,
    request: { query: z.object({ test_id: z.string().max(20), run_no: queryCount(1).optional() }) },
    responses: { 200: json(z.object({ success: z.boolean(), data: EmailContent }), "The email"), ...errorResponses(401, 404, 422, 429) },
  }),
};

async function contentOf(db: Database, principal: Principal, testId: string | number, runNo?: number) {
  const test = await findSpamTest(db, principal, testId);
  const message = await runMessage(db, test.id, runNo ?? test.testRunNo);
  if (!message) throw ApiError.notFound(NO_CONTENT);
  return { spamTest: String(test.id), subject: message.subject, text: message.text, html: message.html, rawEmailContent: message.raw };
}

async function rdnsReport(db: Database, principal: Principal, resolverUrl: string | null, testId: string | number, runNo?: number) {
  const test = await findSpamTest(db, principal, testId);
  const copies = await copiesOfRun(db, test.id, runNo ?? test.testRunNo);
  const senders = [...new Set(copies.map((copy) => copy.senderEmail))];
  // One lookup per distinct copy at a time per sender; a run has a few dozen cells at most.
  return Promise.all(
    senders.map(async (from) => ({
      from_email: from,
      seed_accounts: await Promise.all(
        copies
          .filter((copy) => copy.senderEmail === from)
          .map(async (copy) => ({ id: String(copy.id), email: copy.seedEmail, esp: copy.providerName, ...(await rdnsOf(copy, resolverUrl)) })),
      ),
    })),
  );
}

const received = (copy: CopyRow) => copy.folder !== "pending" && copy.folder !== "not_received";

export const copyReportRoutes = createRouter();

copyReportRoutes.openapi(routes.rdns, async (c) => {
  const report = await rdnsReport(database(c.env.DB), c.get("principal"), config(c.env).dnsResolverUrl, c.req.valid("param").spamTestId, c.req.valid("query").run_no);
  return c.json(report, 200);
});

copyReportRoutes.openapi(routes.rdnsDelivery, async (c) => {
  const body = c.req.valid("json");
  return c.json({ success: true, data: await rdnsReport(database(c.env.DB), c.get("principal"), config(c.env).dnsResolverUrl, body.test_id, body.run_no) }, 200);
});

copyReportRoutes.openapi(routes.headers, async (c) => {
  const db = database(c.env.DB);
  const { spamTestId, replyId } = c.req.valid("param");
  const test = await findSpamTest(db, c.get("principal"), spamTestId);
  const resultId = parseTestId(replyId);
  const copy = resultId === null ? undefined : await copyOfTest(db, test.id, resultId);
  if (!copy) throw ApiError.notFound("Result not found");
  if (!received(copy)) throw ApiError.notFound(NOT_RECEIVED);
  if (copy.rawHeaders === null) throw ApiError.notFound("The headers of this copy were not kept (recorded before Salvo kept them, or by another checker)");
  return c.json(headerObject(copy.rawHeaders), 200);
});

copyReportRoutes.openapi(routes.headersDelivery, async (c) => {
  const db = database(c.env.DB);
  const { test_id, run_no } = c.req.valid("query");
  const test = await findSpamTest(db, c.get("principal"), test_id);
  const copies = (await copiesOfRun(db, test.id, run_no ?? test.testRunNo)).filter((copy) => received(copy) && copy.rawHeaders !== null);
  return c.json({ success: true, data: copies.map((copy) => ({ reply_id: String(copy.id), seed_email: copy.seedEmail, headers: headerObject(copy.rawHeaders!) })) }, 200);
});

copyReportRoutes.openapi(routes.content, async (c) =>
  c.json(await contentOf(database(c.env.DB), c.get("principal"), c.req.valid("param").spamTestId, c.req.valid("query").run_no), 200),
);

copyReportRoutes.openapi(routes.contentDelivery, async (c) => {
  const { test_id, run_no } = c.req.valid("query");
  return c.json({ success: true, data: await contentOf(database(c.env.DB), c.get("principal"), test_id, run_no) }, 200);
});
