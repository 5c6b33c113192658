import { z } from "zod";
import type { CallToolResult, Tool } from "@modelcontextprotocol/sdk/types.js";
import { zoneOffset, isTimeZone } from "../platform/zoned-time";
import { callRoute, toolError, toolSuccess, type Caller, type RouteResult } from "./dispatch";
import { inlineRefs, pathSegment, type JsonSchema, type OpenApiDocument } from "./tools";

/** A tool that does what a user would otherwise chain several calls for, through the same routes. */
export interface TaskTool {
  tool: Tool;
  run(caller: Caller, args: Record<string, unknown>): Promise<CallToolResult>;
}

/** add-leads takes at most 400 leads a call; launch_campaign sends them in batches. */
const LEADS_PER_CALL = 400;
const MAX_LEADS = 2000;
const WEEK_DAYS = 7;
const DAY_MS = 86_400_000;

/** The JSON body schema of one operation of the document, `$ref`s inlined (empty when absent). */
function requestSchema(document: OpenApiDocument, method: string, path: string): JsonSchema {
  const schema = document.paths[path]?.[method]?.requestBody?.content?.["application/json"]?.schema;
  return schema ? (inlineRefs(schema, document.components?.schemas ?? {}) as JsonSchema) : {};
}

/** A property's schema, looked up through anyOf/oneOf/allOf variants too. */
function propertyOf(schema: JsonSchema, name: string): JsonSchema | undefined {
  const own = (schema.properties as Record<string, JsonSchema> | undefined)?.[name];
  if (own) return own;
  for (const key of ["anyOf", "oneOf", "allOf"]) {
    for (const variant of (schema[key] as JsonSchema[] | undefined) ?? []) {
      const found = propertyOf(variant, name);
      if (found) return found;
    }
  }
  return undefined;
}

function described(schema: JsonSchema | undefined, fallback: JsonSchema, description: string): JsonSchema {
  return { ...(schema ?? fallback), description };
}

function invalidArguments(error: z.ZodError): CallToolResult {
  return toolError({
    failed_step: "input",
    error: "Invalid arguments",
    details: error.issues.map((issue) => ({ path: issue.path.join("."), message: issue.message })),
  });
}

const LaunchArgs = z.strictObject({
  name: z.unknown().optional(),
  client_id: z.unknown().optional(),
  sequences: z.array(z.unknown()).min(1),
  leads: z.array(z.unknown()).min(1).max(MAX_LEADS),
  lead_settings: z.record(z.string(), z.unknown()).optional(),
  email_account_ids: z.array(z.unknown()).min(1),
  schedule: z.record(z.string(), z.unknown()).optional(),
  start: z.boolean().optional(),
});

/** Numbers added up and maps merged across add-leads batches. */
function addUp(results: unknown[]): Record<string, unknown> {
  const total: Record<string, unknown> = {};
  for (const result of results as Record<string, unknown>[]) {
    for (const [key, value] of Object.entries(result)) {
      if (typeof value === "number") total[key] = ((total[key] as number | undefined) ?? 0) + value;
      else if (value && typeof value === "object" && !Array.isArray(value)) total[key] = { ...(total[key] as object | undefined), ...value };
      else total[key] ??= value;
    }
  }
  return total;
}

/** A launch step refused: which step, the route's own answer, and what already exists. */
function stepFailed(step: string, result: RouteResult, campaignId: number | null, done: string[]): CallToolResult {
  return toolError({
    failed_step: step,
    status: result.status,
    body: result.body,
    campaign_id: campaignId,
    completed_steps: done,
    message:
      campaignId === null
        ? `Step ${step} failed (HTTP ${result.status}); nothing was created.`
        : `Step ${step} failed (HTTP ${result.status}); campaign ${campaignId} exists, left ${done.includes("start") ? "ACTIVE" : "DRAFTED"}, with ${done.join(", ")} done.`,
  });
}

function launchCampaign(document: OpenApiDocument): TaskTool {
  const create = requestSchema(document, "post", "/api/v1/campaigns/create");
  const sequences = requestSchema(document, "post", "/api/v1/campaigns/{campaign_id}/sequences");
  const leads = requestSchema(document, "post", "/api/v1/campaigns/{campaign_id}/leads");
  const mailboxes = requestSchema(document, "post", "/api/v1/campaigns/{campaign_id}/email-accounts");
  const schedule = requestSchema(document, "post", "/api/v1/campaigns/{campaign_id}/schedule");
  const leadList = propertyOf(leads, "lead_list");

  const tool: Tool = {
    name: "launch_campaign",
    title: "Launch a campaign",
    description: [
      "Create a campaign, save its sequence, add its leads, attach its mailboxes, set its schedule and start it, in one call.",
      "Each step is the REST call of its own tool (campaigns/create, sequences, leads, email-accounts, schedule, status START), made in that order with your key.",
      `Leads go in batches of ${LEADS_PER_CALL} (at most ${MAX_LEADS}). Set start to false to leave the campaign DRAFTED.`,
      "If a step fails, the error names it (failed_step) with the route's own status and body; the steps before it stay done and the campaign is left DRAFTED (campaign_id given) for you to fix, start or delete.",
    ].join("\n\n"),
    inputSchema: {
      type: "object",
      properties: {
        name: described(propertyOf(create, "name"), { type: "string" }, "The campaign's name."),
        client_id: described(propertyOf(create, "client_id"), { type: ["integer", "null"] }, "The client the campaign belongs to (account keys only)."),
        sequences: described(propertyOf(sequences, "sequences"), { type: "array" }, "The sequence's steps (seq_number, subject, email_body, seq_delay_details)."),
        leads: {
          ...described(leadList, { type: "array" }, `The leads to add (each with an email), at most ${MAX_LEADS}.`),
          minItems: 1,
          maxItems: MAX_LEADS,
        },
        lead_settings: described(propertyOf(leads, "settings"), { type: "object" }, "add-leads settings (block and unsubscribe lists, duplicates)."),
        email_account_ids: described(propertyOf(mailboxes, "email_account_ids"), { type: "array" }, "The mailboxes the campaign sends through."),
        schedule: described(Object.keys(schedule).length ? schedule : undefined, { type: "object" }, "When it sends (timezone, days_of_the_week, start_hour, end_hour, min_time_btw_emails, max_new_leads_per_day); left out, the campaign keeps its default schedule."),
        start: { type: "boolean", default: true, description: "Start the campaign at the end (default true)." },
      },
      required: ["sequences", "leads", "email_account_ids"],
    },
    annotations: { title: "Launch a campaign", readOnlyHint: false, destructiveHint: false, openWorldHint: true },
  };

  async function run(caller: Caller, raw: Record<string, unknown>): Promise<CallToolResult> {
    const parsed = LaunchArgs.safeParse(raw);
    if (!parsed.success) return invalidArguments(parsed.error);
    const args = parsed.data;
    const body: Record<string, unknown> = {};
    if (args.name !== undefined) body.name = args.name;
    if (args.client_id !== undefined) body.client_id = args.client_id;
    const created = await callRoute(caller, { method: "POST", path: "/api/v1/campaigns/create", body });
    if (!created.ok) return stepFailed("create_campaign", created, null, []);
    const campaignId = (created.body as { id: number }).id;
    const done = ["create_campaign"];
    const failed = (step: string, result: RouteResult) => stepFailed(step, result, campaignId, done);
    const base = `/api/v1/campaigns/${campaignId}`;

    const saved = await callRoute(caller, { method: "POST", path: `${base}/sequences`, body: { sequences: args.sequences } });
    if (!saved.ok) return failed("save_sequence", saved);
    done.push("save_sequence");

    const batches: unknown[] = [];
    for (let from = 0; from < args.leads.length; from += LEADS_PER_CALL) {
      const batch = { lead_list: args.leads.slice(from, from + LEADS_PER_CALL), ...(args.lead_settings ? { settings: args.lead_settings } : {}) };
      const added = await callRoute(caller, { method: "POST", path: `${base}/leads`, body: batch });
      if (!added.ok) return failed("add_leads", added);
      batches.push(added.body);
    }
    done.push("add_leads");

    const attached = await callRoute(caller, { method: "POST", path: `${base}/email-accounts`, body: { email_account_ids: args.email_account_ids } });
    if (!attached.ok) return failed("attach_mailboxes", attached);
    done.push("attach_mailboxes");

    if (args.schedule) {
      const scheduled = await callRoute(caller, { method: "POST", path: `${base}/schedule`, body: args.schedule });
      if (!scheduled.ok) return failed("set_schedule", scheduled);
      done.push("set_schedule");
    }

    if (args.start !== false) {
      const started = await callRoute(caller, { method: "POST", path: `${base}/status`, body: { status: "START" } });
      if (!started.ok) return failed("start", started);
      done.push("start");
    }

    const campaign = await callRoute(caller, { method: "GET", path: base });
    if (!campaign.ok) return failed("read_campaign", campaign);
    return toolSuccess({ campaign_id: campaignId, completed_steps: done, campaign: campaign.body, leads: addUp(batches) });
  }

  return { tool, run };
}

const WeekArgs = z.strictObject({
  campaign_id: z.union([z.number(), z.string()]),
  time_zone: z.string().optional(),
});

/** Today's calendar date in the zone (UTC for a name that is no zone: the routes then refuse it themselves). */
function weekWindow(timeZone: string, now: number): { start_date: string; end_date: string } {
  const local = now + (isTimeZone(timeZone) ? zoneOffset(now, timeZone) : 0);
  const day = (instant: number) => new Date(instant).toISOString().slice(0, 10);
  return { start_date: day(local - (WEEK_DAYS - 1) * DAY_MS), end_date: day(local) };
}

/** The counts of the top-level figures, which come as decimal strings (the hosted service's form), as numbers. */
function countsOf(figures: Record<string, unknown>): Record<string, number> {
  return Object.fromEntries(Object.entries(figures).filter(([key]) => key.endsWith("_count")).map(([key, value]) => [key, Number(value)]));
}

function summarizeCampaignWeek(): TaskTool {
  const tool: Tool = {
    name: "summarize_campaign_week",
    title: "Summarise a campaign's week",
    description: [
      "A campaign's last 7 days (today included, in time_zone): its totals (sent, opened, clicked, replied, positive replies, bounced, unsubscribed), the figures day by day, and how many replies wait unread in the master inbox.",
      "Made of the REST calls campaigns/{campaign_id}/top-level-analytics-by-date, analytics/day-wise-overall-stats and master-inbox/unread-replies, with your key.",
    ].join("\n\n"),
    inputSchema: {
      type: "object",
      properties: {
        campaign_id: { type: "integer", minimum: 1, description: "The campaign." },
        time_zone: { type: "string", default: "UTC", description: "IANA time zone of the days, e.g. Europe/Paris (default UTC)." },
      },
      required: ["campaign_id"],
    },
    annotations: { title: "Summarise a campaign's week", readOnlyHint: true },
  };

  async function run(caller: Caller, raw: Record<string, unknown>): Promise<CallToolResult> {
    const parsed = WeekArgs.safeParse(raw);
    if (!parsed.success) return invalidArguments(parsed.error);
    const timeZone = parsed.data.time_zone ?? "UTC";
    const window = weekWindow(timeZone, Date.now());
    const id = String(parsed.data.campaign_id);
    const query = new URLSearchParams({ ...window, time_zone: timeZone });
    const [totals, daily, waiting] = await Promise.all([
      callRoute(caller, { method: "GET", path: `/api/v1/campaigns/${pathSegment(id)}/top-level-analytics-by-date`, query }),
      callRoute(caller, { method: "GET", path: "/api/v1/analytics/day-wise-overall-stats", query: new URLSearchParams({ ...window, time_zone: timeZone, campaign_ids: id }) }),
      callRoute(caller, { method: "POST", path: "/api/v1/master-inbox/unread-replies", body: { campaign_id: Number(id), limit: 1 } }),
    ]);
    for (const [step, result] of [["campaign_figures", totals], ["daily_figures", daily], ["replies_waiting", waiting]] as const) {
      if (!result.ok) return toolError({ failed_step: step, status: result.status, body: result.body });
    }
    const figures = totals.body as Record<string, unknown>;
    return toolSuccess({
      campaign: { id: figures.id, name: figures.name, status: figures.status },
      window: { ...window, time_zone: timeZone },
      totals: countsOf(figures),
      daily: (daily.body as { data: { day_wise_stats: unknown[] } }).data.day_wise_stats,
      replies_waiting: (waiting.body as { total_count: number }).total_count,
    });
  }

  return { tool, run };
}

/** The task-shaped tools, their inputs taken from the document's own request schemas. */
export function taskTools(document: OpenApiDocument): TaskTool[] {
  return [launchCampaign(document), summarizeCampaignWeek()];
}
