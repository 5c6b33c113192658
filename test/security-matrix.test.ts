import { describe, expect, it } from "vitest";
import { createCampaign, ingestOk } from "./campaigns/fixtures";
import { ADMIN_TOKEN, call, callJson, createClient, createClientKey, env, provisionAccount } from "./helpers";
import { firstType, type JsonSchema } from "../src/ops/schema-example";
import { insertDelivery } from "./webhooks/fixtures";

/**
 * The tenancy matrix: every /api/v1/ operation of the served OpenAPI document that takes an id is
 * called with another tenant's ids and must answer exactly as for an id that does not exist, writing
 * nothing. The operations come from the document, so a new route is covered (or fails here) at once.
 */

type Schema = JsonSchema;
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

type Kind =
  | "campaign"
  | "tag"
  | "mailbox"
  | "lead"
  | "person"
  | "stat"
  | "webhook"
  | "delivery"
  | "folder"
  | "spamTest"
  | "savedSearch"
  | "client"
  | "clientKey"
  | "accountKey"
  | "blockEntry"
  | "leadList"
  | "leadImport"
  | "tagMapping"
  | "category"
  | "promptTemplate"
  | "replay"
  | "session";
type Objects = Record<Kind, number>;

const MISSING = 999_999_999;

/** Id names that mean the same kind of row wherever they appear. */
const KIND_BY_NAME: Record<string, Kind> = {
  campaign_id: "campaign",
  email_campaign_id: "campaign",
  campaignId: "campaign",
  subSequenceId: "campaign",
  sub_sequence_id: "campaign",
  subsequence_id: "campaign",
  parent_campaign_id: "campaign",
  lead_ids: "person",
  filter_client_id: "client",
  campaign_ids: "campaign",
  email_lead_map_id: "lead",
  lead_id: "person",
  email_lead_id: "person",
  stats_id: "stat",
  email_stats_id: "stat",
  webhook_id: "webhook",
  delivery_id: "delivery",
  folder_id: "folder",
  folderId: "folder",
  spamTestId: "spamTest",
  spam_test_id: "spamTest",
  test_id: "spamTest",
  spamTestIds: "spamTest",
  client_id: "client",
  clientId: "client",
  client_ids: "client",
  campaignClientId: "client",
  campaignTagId: "tag",
  tag_ids: "tag",
  email_account_id: "mailbox",
  email_account_ids: "mailbox",
  emailAccountId: "mailbox",
  selectedEmailAccountId: "mailbox",
  listId: "leadList",
  list_id: "leadList",
  listIds: "leadList",
  sourceListId: "leadList",
  targetListId: "leadList",
  toListId: "leadList",
  to_list_id: "leadList",
  fromListId: "leadList",
  from_list_id: "leadList",
  import_id: "leadImport",
  tagIds: "tag",
  removeTagIds: "tag",
  tagMappingId: "tagMapping",
  leadId: "person",
  leadIds: "person",
  leadMapIds: "lead",
  template_id: "promptTemplate",
  job_id: "replay",
  session_id: "session",
};

/** Id names that mean a tenant's row on some paths only (elsewhere NOT_TENANT's catalogue value): an account's own lead categories. */
const KIND_ON_PATH: Record<string, Record<string, Kind>> = {
  "/api/v1/leads/categories/{category_id}": { category_id: "category" },
};

/**
 * Operations that succeed only with a live mail server behind the caller's mailbox (tested against
 * the lab in test/mail/): with the caller's own ids they must get as far as this refusal.
 */
const NEEDS_MAIL_SERVER: Record<string, { status: number; error: string }> = {
  "POST /api/v1/campaigns/{campaign_id}/reply-email-thread": { status: 400, error: "Email account not found!" },
  "POST /api/v1/campaigns/{campaign_id}/send-test-email": {
    status: 400,
    error: "The email account cannot send: it is suspended, failing its connection check, or has no password",
  },
  // Likewise operations that need a record in another state than the seeded one: they get as far as that refusal.
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/resume": { status: 400, error: "Lead is not paused" },
  // The seeded lead replied, which completed its record.
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/pause": { status: 400, error: "Lead is COMPLETED" },
  "PATCH /api/v1/master-inbox/resume-lead": { status: 400, error: "Lead is not paused" },
  // The seed's own campaign is no subsequence of itself.
  "POST /api/v1/master-inbox/push-to-subsequence": { status: 400, error: "sub_sequence_id must be a subsequence of the lead's campaign" },
};

/** A bare `id` (path or body) names the row of the route it is on. */
const KIND_OF_BARE_ID: [RegExp, Kind][] = [
  [/^\/api\/v1\/account\/api-keys\//, "accountKey"],
  [/^\/api\/v1\/client\/api-key\//, "clientKey"],
  [/^\/api\/v1\/client\/save$/, "client"],
  [/^\/api\/v1\/webhooks?\/|\/webhooks$/, "webhook"],
  [/\/save-search\//, "savedSearch"],
  [/^\/api\/v1\/leads\/(delete|remove)-domain-block-list/, "blockEntry"],
  [/^\/api\/v1\/email-accounts\/tag-manager$/, "tag"],
  [/^\/api\/v1\/email-accounts\//, "mailbox"],
  [/^\/api\/v1\/lead-list\/|^\/api\/v1\/leads\/push-to-campaign$/, "leadList"],
];

/**
 * Ids that name no tenant's rows: shared catalogues (lead categories, seed providers) and the caller's
 * own labels (team members, sequence mappings, idempotency keys, email headers, warmup keys, addresses).
 */
const NOT_TENANT: Record<string, unknown> = {
  category_id: 1,
  team_member_id: 7,
  teamMemberId: 7,
  token: "matrix-token",
  sequence_mapping_id: 77,
  provider_ids: ["gmail"],
  provider_id: "gmail",
  campaignTeamMemberId: 7,
  event_id: "matrix-1",
  message_id: "<matrix@example.com>",
  reply_message_id: "<matrix@example.com>",
  warmup_key_id: "matrix-key",
  email_ids: ["matrix@example.com"],
  // A paging cursor: ids above it, of the caller's own rows only.
  lastSeenLeadId: 0,
};

function labelValue(apiPath: string, name: string): { value: unknown } | undefined {
  if (KIND_ON_PATH[apiPath]?.[name]) return undefined;
  return name in NOT_TENANT ? { value: NOT_TENANT[name] } : undefined;
}

/** Optional body ids that name one row only together: `lead_id` + `campaign_id` (compat rule C6). */
const COMPANION_IDS: Record<string, string> = { lead_id: "campaign_id", campaign_id: "lead_id" };
const RECORD_IDS = ["email_lead_map_id", "lead_id", "campaign_id"];

/** Values the schema alone cannot make valid (a reachable URL, a cron line, an end after the start, a lead the campaign has, one sender throughout). */
const VALUE_OVERRIDES: Record<string, unknown> = {
  webhook_url: "https://hooks.example.com/matrix",
  scheduler_cron_value: "0 9 * * *",
  schedule_start_time: "2027-01-01T09:00:00.000Z",
  test_end_date: "2027-03-01T09:00:00.000Z",
  lead_email: "first@matrix.example",
  email: "new-lead@matrix.example",
  sender_email: "sender@matrix.example",
  sender_accounts: ["sender@matrix.example"],
  domain: "matrix-block.example",
};

/**
 * Id fields of which a request needs one (aliases, or a choice of sources) that the schema cannot
 * make required: unless the slot under test is in a group, the group's first field carries the
 * caller's own id.
 */
const ONE_OF_IDS: Record<string, string[][]> = {
  "POST /api/v1/lead-list/assign-tags": [["listIds", "id"]],
  "POST /api/v1/lead-list/move-leads": [["leadIds"]],
  "POST /api/v1/leads/push-to-campaign": [["campaignId", "campaign_id"], ["leadList.listId", "id", "leadList.leadIds"]],
  "POST /api/v1/leads/leads/push-between-lists": [["toListId", "to_list_id"], ["fromListId", "from_list_id", "leadIds", "lead_ids"]],
  "POST /api/v1/leads/push-to-list": [["leadIds"]],
  "POST /api/v1/leads/campaign/push-to-list": [["leadMapIds"]],
  "POST /api/v1/crm/leads/tags": [["leadId", "lead_id"], ["tagIds", "tag_ids"]],
  "POST /api/v1/master-inbox/push-to-subsequence": [["sub_sequence_id", "subsequence_id"]],
};

/** Optional fields an operation needs that its schema cannot say are required (a choice of one among several). */
const BODY_OVERRIDES: Record<string, Record<string, unknown>> = {
  "POST /api/v1/campaigns/{campaign_id}/events": {
    events: [{ event_id: "matrix-1", type: "OPEN", occurred_at: "2026-11-02T09:00:00.000Z", lead_email: "first@matrix.example" }],
  },
  "POST /api/v1/campaigns/{campaign_id}/webhooks": { name: "Matrix" },
  "POST /api/v1/campaigns/{campaign_id}/leads": { lead_list: [{ email: "new-lead@matrix.example" }] },
  "PUT /api/v1/leads/{lead_id}/status": { status: "paused" },
  "POST /api/v1/leads/add-domain-block-list": { domain_block_list: ["matrix-add.example"] },
  // Optional since the top-level form (compat rule C3), but one of the two forms is needed.
  "POST /api/v1/spam-test/schedule": { scheduler_cron_value: "0 9 * * *" },
  // Campaign scope: every id the body names is checked, the scope's own first.
  "POST /api/v1/webhook/create": { association_type: "campaign", event_types: ["EMAIL_REPLY"], force_create: true },
  "POST /api/v1/webhooks": { url: "https://hooks.example.com/matrix", events: ["EMAIL_REPLY"] },
  "POST /api/v1/campaigns/{campaign_id}/schedule": { timezone: "Europe/Paris" },
  "POST /api/v1/campaigns/{campaign_id}/reply-email-thread": { email_body: "<p>Matrix</p>" },
  // Fields that may come under an alias, so the schema cannot require them.
  "PATCH /api/v1/master-inbox/change-read-status": { read_status: true },
  "PATCH /api/v1/master-inbox/update-category": { category_id: 1 },
  "POST /api/v1/master-inbox/create-task": { name: "Matrix task" },
  "POST /api/v1/master-inbox/create-note": { note_message: "Matrix note" },
  "POST /api/v1/master-inbox/set-reminder": { reminder_time: "2027-01-01T09:00:00.000Z" },
  "POST /api/v1/campaigns/{campaign_id}/sequences": {
    sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }],
  },
  "POST /api/v1/campaigns/{campaign_id}/sequence": {
    sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }],
  },
  "POST /api/v1/lead-list": { listName: "Matrix list" },
  "PUT /api/v1/lead-list/{id}": { listName: "Matrix list renamed" },
  "POST /api/v1/lead-list/{id}/import": { leadList: [{ email: "matrix-import@example.com" }] },
  "POST /api/v1/lead-list/{id}/import-csv": { csv: "email\nmatrix-csv@example.com\n" },
  // A name no other request gives a tag, so the rename does not collide.
  "POST /api/v1/email-accounts/tag-manager": { name: "Matrix renamed" },
  // A change the template and the category take (the schemas cannot require one of their optional fields).
  "PATCH /api/v1/campaigns/{campaign_id}/prompt-template/{template_id}": { is_active: true },
  "PATCH /api/v1/leads/categories/{category_id}": { colour_code: "#123456" },
  // Everything a create needs, so a request naming no mailbox reaches the client check.
  "POST /api/v1/email-accounts/save": {
    from_name: "Matrix",
    from_email: "matrix-save@sender.example.com",
    password: "matrix-secret",
    smtp_host: "smtp.example.com",
    smtp_port: 465,
    imap_host: "imap.example.com",
    imap_port: 993,
  },
};

function isIdName(name: string) {
  return name === "id" || /_id$|Id$|_ids$|Ids$/.test(name);
}

function kindOf(path: string, name: string): Kind | undefined {
  if (KIND_ON_PATH[path]?.[name]) return KIND_ON_PATH[path]![name];
  if (name === "id") return KIND_OF_BARE_ID.find(([pattern]) => pattern.test(path))?.[1];
  return KIND_BY_NAME[name];
}

function resolve(document: Document, schema: Schema): Schema {
  return schema.$ref ? resolve(document, document.components.schemas[schema.$ref.split("/").pop()!]!) : schema;
}

/** A plausible valid value for a schema: its example, default or first enum value, else one shaped by its type. */
function valueFor(document: Document, raw: Schema, name: string): unknown {
  if (name in VALUE_OVERRIDES) return VALUE_OVERRIDES[name];
  const schema = resolve(document, raw);
  if (schema.example !== undefined) return schema.example;
  if (schema.default !== undefined) return schema.default;
  if (schema.enum) return schema.enum[0];
  if (schema.anyOf) return valueFor(document, schema.anyOf.find((s) => firstType(resolve(document, s)) !== undefined)!, name);
  switch (firstType(schema)) {
    case "string":
      if (schema.format === "email") return "matrix@example.com";
      if (schema.format === "date-time") return "2027-01-01T09:00:00.000Z";
      if (schema.format === "date") return "2027-01-01";
      if (schema.pattern?.startsWith("^\\d")) return "1";
      return "Matrix test";
    case "integer":
    case "number":
      return Math.max(1, schema.minimum ?? 1, (schema.exclusiveMinimum ?? 0) + 1);
    case "boolean":
      return false;
    case "array":
      return [valueFor(document, schema.items!, `${name}[]`)];
    case "object":
      return Object.fromEntries(
        (schema.required ?? []).map((property) => [property, valueFor(document, schema.properties![property]!, property)]),
      );
    default:
      throw new Error(`no value for ${name}: ${JSON.stringify(schema)}`);
  }
}

/** An id in the shape its schema wants: a number, a decimal string, or a one-element list. */
function idValue(document: Document, raw: Schema, id: number): unknown {
  const schema = resolve(document, raw);
  if (firstType(schema) === "array") return [idValue(document, schema.items!, id)];
  const first = schema.anyOf ? resolve(document, schema.anyOf.find((s) => firstType(resolve(document, s)))!) : schema;
  return firstType(first) === "string" ? String(id) : id;
}

interface Slot {
  in: "path" | "query" | "body";
  /** The parameter's name, or the property's path in the body (`events.0.email_lead_map_id`). */
  name: string;
  kind: Kind;
  required: boolean;
  schema: Schema;
}

interface Case {
  label: string;
  method: string;
  path: string;
  slots: Slot[];
  query: Record<string, unknown>;
  body: Record<string, unknown> | undefined;
}

function setAt(target: Record<string, unknown>, path: string, value: unknown) {
  const keys = path.split(".");
  let node = target as Record<string, unknown>;
  keys.slice(0, -1).forEach((key, i) => {
    node[key] ??= /^\d+$/.test(keys[i + 1]!) ? [] : {};
    node = node[key] as Record<string, unknown>;
  });
  node[keys.at(-1)!] = value;
}

/**
 * Walks a body schema (nested objects, and the first item of arrays of objects) for id properties:
 * tenants' ids become slots; catalogue ids get their fixed value where the request needs them.
 */
function collectBodyIds(document: Document, apiPath: string, raw: Schema, prefix: string, chainRequired: boolean, body: Record<string, unknown>, slots: Slot[], unknown: string[]) {
  const schema = resolve(document, raw);
  const required = new Set(schema.required ?? []);
  for (const [name, property] of Object.entries(schema.properties ?? {})) {
    const path = prefix ? `${prefix}.${name}` : name;
    const isRequired = chainRequired && required.has(name);
    const resolved = resolve(document, property);
    if (firstType(resolved) === "boolean") continue;
    const label = isIdName(name) ? labelValue(apiPath, name) : undefined;
    if (label) {
      if (isRequired || !prefix) setAt(body, path, label.value);
    } else if (isIdName(name)) {
      const kind = kindOf(apiPath, name);
      if (!kind) unknown.push(`body ${path}`);
      else slots.push({ in: "body", name: path, kind, required: isRequired, schema: property });
    } else if (firstType(resolved) === "object" && resolved.properties) {
      collectBodyIds(document, apiPath, resolved, path, isRequired, body, slots, unknown);
    } else if (firstType(resolved) === "array" && resolved.items && resolve(document, resolved.items).properties) {
      collectBodyIds(document, apiPath, resolved.items!, `${path}.0`, isRequired, body, slots, unknown);
    }
  }
}

/** The operation's id slots and the rest of a valid request; throws when it cannot build one. */
function planOperation(document: Document, path: string, method: string, operation: Operation): Case | undefined {
  const slots: Slot[] = [];
  const query: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === "header") continue;
    if (parameter.in === "path" || isIdName(parameter.name)) {
      const label = labelValue(path, parameter.name);
      if (label) query[parameter.name] = label.value;
      else {
        const kind = kindOf(path, parameter.name);
        if (!kind) unknown.push(`${parameter.in} ${parameter.name}`);
        else slots.push({ in: parameter.in as "path" | "query", name: parameter.name, kind, required: parameter.required ?? false, schema: parameter.schema });
      }
    } else if (parameter.required) query[parameter.name] = valueFor(document, parameter.schema, parameter.name);
  }
  const bodySchema = operation.requestBody?.content["application/json"]?.schema;
  let body: Record<string, unknown> | undefined;
  if (bodySchema) {
    body = valueFor(document, bodySchema, "body") as Record<string, unknown>;
    Object.assign(body, BODY_OVERRIDES[`${method} ${path}`]);
    collectBodyIds(document, path, bodySchema, "", true, body, slots, unknown);
  }
  if (unknown.length) throw new Error(`the matrix does not know what ${unknown.join(", ")} names`);
  if (!slots.length) return undefined;
  return { label: `${method} ${path}`, method, path, slots, query, body };
}

interface Attempt {
  url: string;
  body: Record<string, unknown> | undefined;
}

/** The request with `target` ids in the slots under test and the caller's own ids in the required others. */
function buildAttempt(document: Document, plan: Case, tested: Slot[], target: Objects | "missing", own: Objects): Attempt {
  const idFor = (slot: Slot) => {
    if (!tested.includes(slot)) return own[slot.kind];
    return target === "missing" ? MISSING : target[slot.kind];
  };
  // Optional ids that only mean something together (a lead in a campaign, compat rule C6) go together.
  const companions = tested.flatMap((slot) => (slot.in === "body" && COMPANION_IDS[slot.name] ? [COMPANION_IDS[slot.name]] : []));
  // A record named one of two ways: when the test names it neither way, the caller's own record is given.
  if (!tested.some((slot) => RECORD_IDS.includes(slot.name))) companions.push("email_lead_map_id");
    const testedNames = new Set(tested.map((slot) => slot.name));
  const chosen = (ONE_OF_IDS[plan.label] ?? []).filter((group) => !group.some((name) => testedNames.has(name))).map((group) => group[0]);
  const present = plan.slots.filter((slot) => slot.required || slot.in === "path" || tested.includes(slot) || chosen.includes(slot.name) || (slot.in === "body" && companions.includes(slot.name)));
  let url = plan.path;
  const search = new URLSearchParams(Object.entries(plan.query).map(([k, v]) => [k, String(v)]));
  const body = plan.body ? structuredClone(plan.body) : undefined;
  for (const slot of present) {
    const value = idValue(document, slot.schema, idFor(slot));
    if (slot.in === "path") url = url.replace(`{${slot.name}}`, encodeURIComponent(String(value)));
    else if (slot.in === "query") search.set(slot.name, String(value));
    else setAt(body!, slot.name, value);
  }
  return { url: search.size ? `${url}?${search}` : url, body };
}

/** One D1 batch: every table's row count and every row, so any write shows. */
async function snapshotter() {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations' ORDER BY name",
  ).all<{ name: string }>();
  const columns = await env.DB.batch<{ name: string }>(tables.results.map(({ name }) => env.DB.prepare(`SELECT name FROM pragma_table_info('${name}')`)));
  const statements = tables.results.map(({ name }, i) => {
    const list = columns[i]!.results.map((c) => `"${c.name}"`).join(", ");
    return env.DB.prepare(`SELECT count(*) AS n, coalesce(json_group_array(json_array(${list})), '') AS rows FROM (SELECT * FROM "${name}" ORDER BY rowid)`);
  });
  return async () => {
    const results = await env.DB.batch<{ n: number; rows: string }>(statements);
    return Object.fromEntries(tables.results.map(({ name }, i) => [name, `${results[i]!.results[0]!.n}:${results[i]!.results[0]!.rows}`]));
  };
}

function changedTables(before: Record<string, string>, after: Record<string, string>) {
  return Object.keys(before).filter((table) => before[table] !== after[table]);
}

const api = <T>(apiKey: string, path: string, body?: unknown, method = body === undefined ? "GET" : "POST") =>
  callJson<T>(path, { apiKey, method, body });

async function ok<T>(promise: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const { status, body } = await promise;
  if (status !== 200) throw new Error(`${what} failed with ${status}: ${JSON.stringify(body)}`);
  return body;
}

/** One object of every kind, created through the API with `apiKey` (an account key or a client key). */
async function seed(
  apiKey: string,
  extra: { client: number; clientKey: number; accountKey: number },
  fileTheTest = true,
  /** The account's own key: client keys cannot create lead categories, so the account makes the seed's. */
  accountApiKey = apiKey,
  /** Wait for the seed's background work (the reply's categorisation) before snapshots are compared. */
  settle = fileTheTest,
  /** The kinds a single operation needs (the own-ids pass): the reply-categorisation objects are made only then. */
  only?: Set<Kind>,
): Promise<Objects> {
  const campaign = await createCampaign(apiKey, { name: "Matrix" });
  const tags = await ok(api<{ tags: { id: number }[] }>(apiKey, `/api/v1/campaigns/${campaign}/tags`, { tags: ["Matrix tag"] }), "tags");
  // The own-ids pass unsubscribes these leads everywhere on the way; each seed adds them again regardless.
  const { emailToLeadIdMap: leads } = await ok(
    api<{ emailToLeadIdMap: Record<string, number> }>(apiKey, `/api/v1/campaigns/${campaign}/leads`, {
      lead_list: [{ email: "first@matrix.example" }, { email: "second@matrix.example" }],
      settings: { return_lead_ids: true, ignore_unsubscribe_list: true },
    }),
    "leads",
  );
  const lead = leads["first@matrix.example"]!;
  await ingestOk(apiKey, campaign, [
    { event_id: "sent-1", type: "SENT", email_lead_map_id: lead, occurred_at: "2026-11-01T09:00:00Z" },
    { event_id: "reply-1", type: "REPLY", email_lead_map_id: lead, occurred_at: "2026-11-01T10:00:00Z", body: "Tell me more", message_id: "<r1@x>" },
  ]);
  const inbox = await ok(
    api<{ messages: { email_lead_map_id: number; email_history: { stats_id: string; type: string }[] }[] }>(
      apiKey,
      "/api/v1/master-inbox/inbox-replies?fetch_message_history=true",
      { filters: { campaignId: campaign } },
    ),
    "inbox listing",
  );
  const stat = Number(inbox.messages.find((m) => m.email_lead_map_id === lead)!.email_history.find((m) => m.type === "REPLY")!.stats_id);
  const created = async <T>(promise: Promise<{ status: number; body: T }>, what: string): Promise<T> => {
    const { status, body } = await promise;
    if (status !== 201) throw new Error(`${what} failed with ${status}: ${JSON.stringify(body)}`);
    return body;
  };
  const wanted = (kind: Kind) => !only || only.has(kind);
  const category = wanted("category")
    ? (await created(api<{ data: { id: number } }>(accountApiKey, "/api/v1/leads/categories", { name: `Matrix ${crypto.randomUUID()}` }), "lead category")).data.id
    : MISSING;
  const template = wanted("promptTemplate")
    ? (await created(api<{ data: { template: { id: number } } }>(apiKey, `/api/v1/campaigns/${campaign}/prompt-template`, { prompt_content: "Matrix prompt", categories: [1] }), "prompt template")).data.template.id
    : MISSING;
  // A completed dry run (written as a replay leaves one, so no chunk runs while the matrix compares snapshots).
  const replay = !wanted("replay") ? MISSING : (await env.DB.prepare(
    "INSERT INTO triage_replays (account_id, campaign_id, dry_run, status, options, total) SELECT account_id, id, 1, 'completed', '{}', 0 FROM campaigns WHERE id = ? RETURNING id",
  )
    .bind(campaign)
    .first<{ id: number }>())!.id;
  await ok(api(apiKey, "/api/v1/master-inbox/create-task", { email_lead_map_id: lead, name: "Call back" }), "task");
  // After the events, so no delivery is under way while the matrix compares snapshots.
  const webhook = await ok(
    api<{ data: { id: number } }>(apiKey, `/api/v1/campaigns/${campaign}/webhooks`, {
      name: "CRM",
      webhook_url: "https://hooks.example.com/matrix",
      event_types: ["EMAIL_REPLY"],
    }),
    "webhook",
  );
  // A settled delivery of it (a failed one, so nothing is in flight and it may be sent again).
  const owner = (await env.DB.prepare("SELECT account_id FROM webhooks WHERE id = ?").bind(webhook.data.id).first<{ account_id: number }>())!.account_id;
  const { deliveryId: delivery } = await insertDelivery({ accountId: owner, webhookId: webhook.data.id, campaignId: campaign, eventType: "EMAIL_REPLY", payload: {}, status: "failed", nextAttemptAt: null });
  const folder = await ok(api<{ id: number }>(apiKey, "/api/v1/spam-test/folder", { name: "Matrix folder" }), "folder");
  const spamTest = await ok(
    api<{ id: string }>(apiKey, "/api/v1/spam-test/manual", {
      test_name: "Matrix",
      spam_filters: true,
      campaign_id: campaign,
      sequence_mapping_id: 77,
      provider_ids: ["gmail"],
      sender_accounts: ["sender@matrix.example"],
      folder_id: fileTheTest ? folder.id : null,
    }),
    "spam test",
  );
  const search = await ok(
    api<{ data: { id: number } }>(apiKey, "/api/v1/search-email-leads/search-filters/save-search", { search_string: "Matrix" }),
    "saved search",
  );
  const mailbox = await ok(
    api<{ id: number }>(apiKey, "/api/v1/email-accounts/save", {
      ...BODY_OVERRIDES["POST /api/v1/email-accounts/save"],
      from_email: `matrix-${crypto.randomUUID()}@sender.example.com`,
    }),
    "mailbox",
  );
  await ok(api(apiKey, `/api/v1/campaigns/${campaign}/email-accounts`, { email_account_ids: [mailbox.id] }), "attaching the mailbox");
  // A block-list entry in the seed's client scope (a client key's own client), so deleting it by value with that client_id finds it.
  await ok(api(apiKey, "/api/v1/leads/add-domain-block-list", { domain_block_list: [VALUE_OVERRIDES.domain], client_id: extra.client }), "block list");
  const entries = await ok(api<{ id: number }[]>(apiKey, `/api/v1/leads/get-domain-block-list?filter_email_or_domain=matrix-block&filter_client_id=${extra.client}`), "block list read");
  // The person (leads row) behind the record, for the routes that name a lead rather than a record.
  const person = (await env.DB.prepare("SELECT lead_id FROM campaign_leads WHERE id = ?").bind(lead).first<{ lead_id: number }>())!.lead_id;
  const leadList = (await ok(api<{ data: { id: number } }>(apiKey, "/api/v1/lead-list", { listName: "Matrix list" }), "lead list")).data.id;
  await ok(api(apiKey, `/api/v1/lead-list/${leadList}/import`, { leadList: [{ email: "first@matrix.example" }] }), "list import");
  const queued = await api<{ data: { id: number } }>(apiKey, `/api/v1/lead-list/${leadList}/import-csv`, { csv: "email\nfirst@matrix.example\n" });
  if (queued.status !== 202) throw new Error(`csv import failed with ${queued.status}`);
  const leadImport = queued.body.data.id;
  // The import works in the background: let it end before the matrix compares snapshots.
  for (let i = 0; i < 100; i++) {
    const { data } = await ok(api<{ data: { state: string } }>(apiKey, `/api/v1/lead-list/${leadList}/imports/${leadImport}`), "import progress");
    if (data.state === "done") break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const tag = tags.tags[0]!.id;
  await ok(api(apiKey, "/api/v1/crm/leads/tags", { leadId: person, tagIds: [tag] }), "lead tag");
  const tagMapping = (await ok(api<{ data: { tag_mapping_id: number }[] }>(apiKey, `/api/v1/crm/leads/tags?leadId=${person}`), "lead tags")).data[0]!.tag_mapping_id;
  // A web app session opened with this key (its id only: the matrix calls with keys).
  const signedIn = await api<{ data: { id: number } }>(apiKey, "/api/v1/sessions", {});
  if (signedIn.status !== 201) throw new Error(`sign-in failed with ${signedIn.status}`);
  const session = signedIn.body.data.id;
  // The reply is categorised in the background (src/triage/): let that end before the matrix compares snapshots.
  for (let i = 0; settle && i < 200 && !(await env.DB.prepare("SELECT 1 FROM reply_categorisations WHERE event_id = ?").bind(stat).first()); i++) {
    await new Promise((resolve) => setTimeout(resolve, 25));
  }
  return {
    session,
    campaign,
    tag,
    mailbox: mailbox.id,
    lead,
    person,
    stat,
    webhook: webhook.data.id,
    folder: folder.id,
    spamTest: Number(spamTest.id),
    savedSearch: search.data.id,
    leadList,
    leadImport,
    tagMapping,
    delivery,
    blockEntry: entries[0]!.id,
    category,
    promptTemplate: template,
    replay,
    ...extra,
  };
}

async function mintAccountKey(accountId: number) {
  const { status, body } = await callJson<{ id: number }>(`/admin/v1/accounts/${accountId}/api-keys`, {
    method: "POST",
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (status !== 201) throw new Error(`minting an account key failed with ${status}`);
  return body.id;
}

/** Account A (account-level objects, client CA with its objects, client CB with its objects) and account B. */
async function tenants() {
  const a = await provisionAccount();
  const b = await provisionAccount();
  const aKey = await mintAccountKey(a.id);
  const bKey = await mintAccountKey(b.id);
  const ca = await createClient(a.apiKey, "CA", "ca@matrix.example");
  const cb = await createClient(a.apiKey, "CB", "cb@matrix.example");
  const bClient = await createClient(b.apiKey, "B client", "bc@matrix.example");
  const caKey = await createClientKey(a.apiKey, ca);
  const cbKey = await createClientKey(a.apiKey, cb);
  const bClientKey = await createClientKey(b.apiKey, bClient);
  return {
    aObjects: await seed(a.apiKey, { client: ca, clientKey: caKey.id, accountKey: aKey }),
    bObjects: await seed(b.apiKey, { client: bClient, clientKey: bClientKey.id, accountKey: bKey }),
    caObjects: await seed(caKey.api_key, { client: ca, clientKey: caKey.id, accountKey: aKey }, true, a.apiKey),
    cbObjects: await seed(cbKey.api_key, { client: cb, clientKey: cbKey.id, accountKey: MISSING }, true, a.apiKey),
    bApiKey: b.apiKey,
    cbApiKey: cbKey.api_key,
  };
}

function namingMissing<T extends { result: { status: number; body: unknown } }>(sent: T, ids: number[]): T {
  const body = sent.result.body as { error?: unknown } | null;
  if (typeof body?.error !== "string") return sent;
  const error = ids.reduce((text, id) => text.replace(new RegExp(`\\b${id}\\b`, "g"), String(MISSING)), body.error);
  return { ...sent, result: { ...sent.result, body: { ...body, error } } };
}

async function readBody(response: Response) {
  const text = await response.text();
  return response.headers.get("Content-Type")?.includes("json") && text ? (JSON.parse(text) as unknown) : text;
}

describe("tenancy security matrix (from the OpenAPI document)", () => {
  it("answers every id-taking operation called with another tenant's ids exactly as for a missing id, writing nothing", async () => {
    const document = (await (await call("/openapi.json")).json()) as Document;
    const plans: Case[] = [];
    const unbuildable: string[] = [];
    for (const [path, methods] of Object.entries(document.paths)) {
      if (!path.startsWith("/api/v1/")) continue;
      for (const [method, operation] of Object.entries(methods)) {
        try {
          const plan = planOperation(document, path, method.toUpperCase(), operation);
          if (plan) plans.push(plan);
        } catch (error) {
          unbuildable.push(`${method.toUpperCase()} ${path}: ${(error as Error).message}`);
        }
      }
    }
    expect(unbuildable, `operations with ids the matrix cannot build a request for: ${unbuildable.join("; ")}`).toEqual([]);
    expect(plans.length).toBeGreaterThan(40);

    const world = await tenants();
    const snapshot = await snapshotter();
    const callers = [
      { who: "another account's key", apiKey: world.bApiKey, own: world.bObjects, foreign: world.aObjects },
      { who: "another account's key (client CA's rows)", apiKey: world.bApiKey, own: world.bObjects, foreign: world.caObjects },
      { who: "another client's key", apiKey: world.cbApiKey, own: world.cbObjects, foreign: world.caObjects },
      { who: "a client's key (the account's own rows)", apiKey: world.cbApiKey, own: world.cbObjects, foreign: world.aObjects },
    ];
    const mismatches: string[] = [];
    const writes: string[] = [];
    const onlyValidation: string[] = [];
    let attempts = 0;

    for (const plan of plans) {
      const variants = plan.slots.map((slot) => [slot]);
      if (plan.slots.length > 1) variants.push(plan.slots);
      for (const tested of variants) {
        for (const { who, apiKey, own, foreign } of callers) {
          const send = async (attempt: Attempt) => {
            const before = await snapshot();
            const response = await call(attempt.url, { method: plan.method, apiKey, body: attempt.body });
            const result = { status: response.status, body: await readBody(response) };
            const changed = changedTables(before, await snapshot());
            return { result, changed };
          };
          const foreignAttempt = buildAttempt(document, plan, tested, foreign, own);
          const missingAttempt = buildAttempt(document, plan, tested, "missing", own);
          const label = `${plan.label} [${tested.map((s) => `${s.in} ${s.name}`).join(" + ")}] as ${who}: ${plan.method} ${foreignAttempt.url} ${JSON.stringify(foreignAttempt.body ?? "")}`;
          // An error may name the id it refuses ("Email account not found: 12"): read as the missing id's.
          const foreignIds = tested.map((slot) => (foreign as Objects)[slot.kind]);
          const asForeign = namingMissing(await send(foreignAttempt), foreignIds);
          const asMissing = await send(missingAttempt);
          attempts += 1;
          if (JSON.stringify(asForeign.result) !== JSON.stringify(asMissing.result)) {
            mismatches.push(`${label}\n  foreign: ${JSON.stringify(asForeign.result)}\n  missing: ${JSON.stringify(asMissing.result)}`);
          }
          if (asForeign.changed.length) writes.push(`${label} changed ${asForeign.changed.join(", ")}`);
          if (asMissing.changed.length) writes.push(`${label} (missing id) changed ${asMissing.changed.join(", ")}`);
          const details = (asMissing.result.body as { details?: { path: string }[] }).details ?? [];
          const aboutTheId = details.some((detail) => tested.some((slot) => detail.path === slot.name));
          if (asMissing.result.status === 422 && !aboutTheId) onlyValidation.push(`${label}: ${JSON.stringify(asMissing.result.body)}`);
        }
      }
    }

    expect(onlyValidation, `requests refused by validation test nothing: fix the builder or its overrides: ${onlyValidation.slice(0, 5).join("; ")}`).toEqual([]);
    // One assertion, so a broken scope shows both its answer and the rows it wrote.
    expect({ mismatches, writes }, "answers that tell another tenant's id from a missing one, and refused requests that wrote rows").toEqual({
      mismatches: [],
      writes: [],
    });
    expect(attempts).toBeGreaterThan(100);

    // The same requests with the caller's own ids succeed, so the matrix tested the scope, not validation.
    // Each on fresh objects (an empty folder, so it may be deleted); key deletions last, as they end the key.
    const ownFailures: string[] = [];
    const keyDeletionsLast = [...plans].sort((x, y) => Number(x.method === "DELETE") - Number(y.method === "DELETE"));
    for (const plan of keyDeletionsLast) {
      const { client, clientKey, accountKey } = world.bObjects;
      const mine = await seed(world.bApiKey, { client, clientKey, accountKey }, false, world.bApiKey, false, new Set(plan.slots.map((slot) => slot.kind)));
      const attempt = buildAttempt(document, plan, plan.slots, mine, mine);
      const response = await call(attempt.url, { method: plan.method, apiKey: world.bApiKey, body: attempt.body });
      const body = await readBody(response);
      const needs = NEEDS_MAIL_SERVER[plan.label];
      const reachedTheServer = needs !== undefined && response.status === needs.status && (body as { error?: string })?.error === needs.error;
      if (response.status >= 300 && !reachedTheServer) ownFailures.push(`${plan.label}: ${response.status} ${JSON.stringify(body)}`);
    }
    expect(ownFailures, "requests that fail even with the caller's own ids").toEqual([]);
  }, 900_000);
});
