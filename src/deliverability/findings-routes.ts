import { createRoute, z } from "@hono/zod-openapi";
import { PLACEMENT_FOLDERS } from "../db/schema";
import { database, type Database } from "../platform/db";
import type { Principal } from "../platform/principal";
import { API_KEY_SECURITY, createRouter, errorResponses, json, jsonBody, queryCount } from "../platform/openapi";
import {
  authDetails,
  blacklistReport,
  domainDetails,
  groupWise,
  ipDetails,
  linkReport,
  senderAccountWise,
  spamFilterDetails,
  type AuthMethod,
  type ResultRow,
} from "./findings";
import { ProviderReportRequest, requestedTestId } from "./report-routes";
import { listResults } from "./report-store";
import { placementCounts, SpamTestParams, type SpamTestRow } from "./shared";
import { findSpamTest, listProviders, listSenders } from "./store";

/** One run of a test (the latest by default) with its results in the test's provider order. */
interface Run {
  test: SpamTestRow;
  run: number;
  rows: ResultRow[];
  senders: { id: number; email: string }[];
  providers: { groupId: string; groupName: string; regionId: string; regionName: string }[];
}

async function loadRun(db: Database, principal: Principal, id: string | number, runNo?: number): Promise<Run> {
  const test = await findSpamTest(db, principal, id);
  const run = runNo ?? test.testRunNo;
  const [rows, senders, catalogue] = await Promise.all([listResults(db, test.id, run), listSenders(db, test.id), listProviders(db)]);
  const order = new Map(test.providerIds.map((providerId, index) => [providerId, index]));
  rows.sort((a, b) => order.get(a.providerId)! - order.get(b.providerId)! || a.id - b.id);
  const byId = new Map(catalogue.map((p) => [p.id, p]));
  return {
    test,
    run,
    rows,
    senders: senders.map((s) => ({ id: s.id, email: s.fromEmail })),
    providers: test.providerIds.map((providerId) => byId.get(providerId)!),
  };
}

const emails = (run: Run) => run.senders.map((s) => s.email);

const FOLDER = z.enum([...PLACEMENT_FOLDERS, "pending"]);
const Seed = {
  id: z.string().openapi({ description: "The result's id" }),
  provider_id: z.string(),
  provider_name: z.string(),
  email: z.string().openapi({ description: "The seed address" }),
  folder: FOLDER,
};
const Status = z.object({ status: z.string().nullable() });
const SymbolRow = z.object({ name: z.string(), score: z.number(), description: z.string().nullable() });
const ListTally = z.object({ name: z.string(), description: z.string().nullable(), count: z.number().int() });
const PassFail = z.object({ pass_count: z.number().int(), fail_count: z.number().int() });

const SenderAccountWiseRow = z
  .object({
    id: z.string(),
    email: z.string(),
    ...placementCounts,
    pending_count: z.number().int(),
    total_count: z.number().int(),
    details: z.array(
      z.object({
        ...Seed,
        reply: z
          .object({
            mail_folder: FOLDER,
            mailbox_folder: z.string().nullable(),
            message_id: z.string().nullable(),
            received_at: z.string().nullable(),
            spam_score: z.number().nullable(),
            spf_result: Status,
            dkim_result: Status,
            dmarc_result: Status,
            rdns_result: z.object({ ip: z.string().nullable(), rdns: z.string().nullable() }),
            blacklist_status: z.object({ totalBlacklist: z.number().int().nullable(), blacklists: z.array(z.string()) }),
          })
          .nullable(),
      }),
    ),
  })
  .openapi("SenderAccountWiseRow");

const GroupWiseReport = z
  .object({
    overallTotalCount: z.number().int(),
    status: z.string(),
    result: z.array(
      z.object({
        group_id: z.string(),
        group_name: z.string(),
        region_id: z.string(),
        region_name: z.string(),
        ...placementCounts,
        adjusted_total_email_count: z.number().int(),
      }),
    ),
  })
  .openapi("GroupWiseReport");

const SpamFilterRow = z
  .object({
    email: z.string(),
    scored_count: z.number().int(),
    average_score: z.number().nullable(),
    details: z.array(
      z.object({
        ...Seed,
        spam_score: z.number(),
        spam_required: z.number().nullable(),
        spam_action: z.string().nullable(),
        is_spam: z.boolean().nullable(),
        symbols: z.array(SymbolRow),
      }),
    ),
  })
  .openapi("SpamFilterDetailsRow");

const AuthRow = z
  .object({
    email: z.string(),
    pass_count: z.number().int(),
    fail_count: z.number().int(),
    not_checked_count: z.number().int(),
    details: z.array(z.object({ ...Seed, status: z.string().nullable() })),
  })
  .openapi("AuthenticationDetailsRow");

const BlacklistRow = z
  .object({
    email: z.string(),
    details: z.array(
      z.object({
        ...Seed,
        ip: z.string().nullable(),
        host: z.string().nullable(),
        checked: z.boolean(),
        blacklist_count: z.number().int().nullable(),
        blacklists: z.array(SymbolRow),
      }),
    ),
  })
  .openapi("BlacklistRow");

const IpDetails = z
  .object({
    total_ips: z.number().int(),
    total_blacklist_count: z.number().int().nullable(),
    ips: z.array(
      z.object({
        ip: z.string(),
        hosts: z.array(z.string()),
        senders: z.array(z.string()),
        message_count: z.number().int(),
        checked_count: z.number().int(),
        blacklist_count: z.number().int().nullable(),
        blacklists: z.array(ListTally),
      }),
    ),
  })
  .openapi("IpDetails");

const DomainRow = z
  .object({
    domain: z.string(),
    senders: z.array(z.string()),
    message_count: z.number().int(),
    spf: PassFail,
    dkim: PassFail,
    dmarc: PassFail,
    link_domains: z.array(z.string()),
    checked_count: z.number().int(),
    blacklist_count: z.number().int().nullable(),
    blacklists: z.array(ListTally),
  })
  .openapi("DomainDetailsRow");

const LinkReport = z
  .object({
    checked_messages: z.number().int(),
    total_links: z.number().int(),
    broken_count: z.number().int(),
    redirected_count: z.number().int(),
    links: z.array(
      z.object({
        url: z.string(),
        ok: z.boolean(),
        status: z.number().int().nullable(),
        final_url: z.string().nullable(),
        redirects: z.number().int(),
        error: z.string().nullable(),
        message_count: z.number().int(),
        senders: z.array(z.string()),
      }),
    ),
  })
  .openapi("LinkReport");

/** One report: what it computes from a run, its answer's schema, and the paths the clients call it by. */
interface Report<S extends z.ZodType> {
  key: string;
  summary: string;
  description: string;
  schema: S;
  build: (run: Run) => z.input<S>;
  /** The hosted form: `/spam-test/report/{spamTestId}/<path>`. */
  path: string;
  method: "get" | "post";
  /** The `/smart-delivery/<path>` form some clients call, answering `{success, data}`. */
  delivery?: { path: string; method: "get" | "post" };
}

const NO_OUTSIDE_DATA =
  "Block lists come only from the spam filter's DNS list rules on each copy (Rspamd RBL_*/RECEIVED_*, SpamAssassin RCVD_IN_*; allow lists, failed or refused lookups and rules scored below zero left out): `blacklist_count` is null where no copy was scored, and a list the filter does not query is never reported.";

const authReport = (method: AuthMethod, name: string, delivery?: Report<typeof AuthRow>["delivery"]): Report<z.ZodArray<typeof AuthRow>> => ({
  key: `${method}Details`,
  summary: `${name} verdicts per sender`,
  description: `Per sender, the ${name} verdict (RFC 8601 result words) of the seed's Authentication-Results on every received copy; \`fail_count\` counts every verdict but pass, \`not_checked_count\` the copies without one.`,
  schema: z.array(AuthRow),
  build: (run) => authDetails(run.rows, emails(run), method),
  path: `${method}-details`,
  method: "get",
  delivery,
});

const reports = [
  {
    key: "senderAccountWise",
    summary: "Placement per sender account, with every seed's copy",
    description:
      "Per sender: its placement counts and, per seed, where the message landed (`reply.mail_folder` is inbox, tab or spam; `reply` is null for a message not received or still pending) with the copy's authentication verdicts, sending hop and IP block-list hits.",
    schema: z.array(SenderAccountWiseRow),
    build: (run) => senderAccountWise(run.rows, run.senders),
    path: "sender-account-wise",
    method: "get",
    delivery: { path: "sender-report", method: "get" },
  } satisfies Report<z.ZodArray<typeof SenderAccountWiseRow>>,
  {
    key: "groupWise",
    summary: "Placement per provider group and region",
    description: "The provider report summed per provider group (Google, Microsoft, US ISPs...), each with its region; groups in the order of the test's providers.",
    schema: GroupWiseReport,
    build: (run) => {
      const result = groupWise(run.rows, run.providers);
      return { overallTotalCount: run.rows.length, status: run.test.status, result };
    },
    path: "groupwise",
    method: "post",
    delivery: { path: "geo-report", method: "post" },
  } satisfies Report<typeof GroupWiseReport>,
  {
    key: "spamFilterDetails",
    summary: "Spam filter scores per sender",
    description:
      "Per sender, every copy a spam filter scored (Rspamd when configured, or an operator's checker): score, threshold, action, whether the score reaches the threshold, and the rules that made the score. Copies without a score are left out.",
    schema: z.array(SpamFilterRow),
    build: (run) => spamFilterDetails(run.rows, emails(run)),
    path: "spam-filter-details",
    method: "get",
    delivery: { path: "spam-filter", method: "post" },
  } satisfies Report<z.ZodArray<typeof SpamFilterRow>>,
  authReport("spf", "SPF", { path: "spf", method: "get" }),
  authReport("dkim", "DKIM", { path: "dkim", method: "get" }),
  authReport("dmarc", "DMARC"),
  {
    key: "blacklist",
    summary: "IP block lists per sender and copy",
    description: `Per sender, every received copy with its sending IP and host and the IP block lists its spam filter matched. ${NO_OUTSIDE_DATA}`,
    schema: z.array(BlacklistRow),
    build: (run) => blacklistReport(run.rows, emails(run)),
    path: "blacklist",
    method: "get",
    delivery: { path: "blacklists", method: "get" },
  } satisfies Report<z.ZodArray<typeof BlacklistRow>>,
  {
    key: "ipDetails",
    summary: "Sending IPs of a test",
    description: `Per sending IP (the first hop outside the sender, from the copies' Received headers): its hosts, the senders that went through it, and the IP block lists matched. ${NO_OUTSIDE_DATA} No reputation, ASN or geolocation: those need outside sources.`,
    schema: IpDetails,
    build: (run) => ipDetails(run.rows),
    path: "ip-analytics",
    method: "get",
    delivery: { path: "ip-details", method: "get" },
  } satisfies Report<typeof IpDetails>,
  {
    key: "domainDetails",
    summary: "Sender domains of a test",
    description:
      "Per sender domain: its senders, SPF/DKIM/DMARC tallies over the received copies, the domains their links point to, and the domain block lists (DBL, URIBL, SURBL) the spam filter matched; such a list may have matched the sender's domain or a linked one (the filter's rule does not say which). `blacklist_count` is null where no copy was scored; no DNS records are looked up.",
    schema: z.array(DomainRow),
    build: (run) => domainDetails(run.rows, emails(run)),
    path: "domain-blacklist",
    method: "get",
    delivery: { path: "domain-blacklist", method: "get" },
  } satisfies Report<z.ZodArray<typeof DomainRow>>,
  {
    key: "linkReport",
    summary: "Links of the test message, as the link checker followed them",
    description: "Every link the checker followed (HEAD, then GET, redirects counted), once per URL, reported as broken when it failed in any copy.",
    schema: LinkReport,
    build: (run) => linkReport(run.rows),
    path: "link-report",
    method: "get",
  } satisfies Report<typeof LinkReport>,
] as Report<z.ZodType>[];

const tags = ["Deliverability"];
const RunQuery = z.object({ run_no: queryCount(1).optional().openapi({ description: "The run (default: the latest)" }) });
const DeliveryQuery = z.object({
  test_id: z.string().openapi({ description: "The spam test's id", example: "12" }),
  run_no: queryCount(1).optional().openapi({ description: "The run (default: the latest)" }),
});
const hostedName = (key: string) => key.charAt(0).toUpperCase() + key.slice(1);

export const findingsRoutes = createRouter();

// Each report's schema and builder are checked together where `reports` lists them (`satisfies`);
// this loop sees them as any schema, so its answers are cast.
for (const report of reports) {
  const hosted = createRoute({
    method: report.method,
    path: `/api/v1/spam-test/report/{spamTestId}/${report.path}`,
    operationId: `spamTestReport${hostedName(report.key)}`,
    tags,
    summary: report.summary,
    description: report.description,
    security: API_KEY_SECURITY,
    request: { params: SpamTestParams, query: RunQuery },
    responses: { 200: json(report.schema, "The report"), ...errorResponses(401, 404, 422, 429) },
  });
  findingsRoutes.openapi(hosted, async (c) => {
    const { run_no } = c.req.valid("query");
    const run = await loadRun(database(c.env.DB), c.get("principal"), c.req.valid("param").spamTestId, run_no);
    return c.json(report.build(run) as never, 200);
  });

  if (!report.delivery) continue;
  const wrapped = json(z.object({ success: z.boolean(), data: report.schema }), "The report");
  const deliveryRoute = {
    method: report.delivery.method,
    path: `/api/v1/smart-delivery/${report.delivery.path}`,
    operationId: `smartDelivery${hostedName(report.key)}`,
    tags,
    summary: `${report.summary} (the /smart-delivery form)`,
    description: `${report.description} The test is named by \`test_id\`; the answer is \`{success, data}\`.`,
    security: API_KEY_SECURITY,
  } as const;
  if (report.delivery.method === "get") {
    const route = createRoute({ ...deliveryRoute, method: "get", request: { query: DeliveryQuery }, responses: { 200: wrapped, ...errorResponses(401, 404, 422, 429) } });
    findingsRoutes.openapi(route, async (c) => {
      const { test_id, run_no } = c.req.valid("query");
      const run = await loadRun(database(c.env.DB), c.get("principal"), test_id, run_no);
      return c.json({ success: true, data: report.build(run) } as never, 200);
    });
  } else {
    const route = createRoute({ ...deliveryRoute, method: "post", request: { body: jsonBody(ProviderReportRequest, { spam_test_id: 1 }) }, responses: { 200: wrapped, ...errorResponses(401, 404, 422, 429) } });
    findingsRoutes.openapi(route, async (c) => {
      const body = c.req.valid("json");
      const run = await loadRun(database(c.env.DB), c.get("principal"), requestedTestId(body), body.run_no);
      return c.json({ success: true, data: report.build(run) } as never, 200);
    });
  }
}
