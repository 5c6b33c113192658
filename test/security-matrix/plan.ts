import { firstType, type JsonSchema } from "../../src/ops/schema-example";

/**
 * The tenancy matrix's plans: for every /api/v1/ operation of the served OpenAPI document that takes
 * an id, the id slots it has (path, query, body) and the rest of a valid request, and the attempts
 * that put another tenant's, a missing or the caller's own ids in them. The operations come from the
 * document, so a new route is covered (or fails test/security-matrix/coverage.test.ts) at once.
 */

type Schema = JsonSchema;
interface Parameter {
  name: string;
  in: "path" | "query" | "header";
  required?: boolean;
  schema: Schema;
}
export interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: Schema }> };
}
export interface Document {
  paths: Record<string, Record<string, Operation>>;
  components: { schemas: Record<string, Schema> };
}

export type Kind =
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
  | "oauthSession"
  | "session"
  | "campaignFolder"
  | "codeIntegration"
  | "savedView"
  | "untrackedReply"
  | "verificationJob";
/** Ids are numbers, but for an OAuth consent session's (`oas_…`) and a verification job's (`vj_…`). */
export type Objects = Record<Exclude<Kind, "oauthSession" | "verificationJob">, number> & { oauthSession: string; verificationJob: string };

export const MISSING = 999_999_999;

/** Id names that mean the same kind of row wherever they appear. */
const KIND_BY_NAME: Record<string, Kind> = {
  campaign_id: "campaign",
  email_campaign_id: "campaign",
  campaignId: "campaign",
  campaignIds: "campaign",
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
  emailStatsId: "stat",
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
  emailAccountIds: "mailbox",
  from_email_account_ids: "mailbox",
  selectedEmailAccountId: "mailbox",
  fromEmailId: "mailbox",
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
  integration_id: "codeIntegration",
  saved_view_id: "savedView",
  emailCampaignId: "campaign",
  leadMapId: "lead",
  untrackedReplyId: "untrackedReply",
};

/**
 * Id names that mean another kind on some paths: an account's own lead categories (elsewhere
 * NOT_TENANT's catalogue value), and an OAuth consent session (elsewhere a web app session).
 */
const KIND_ON_PATH: Record<string, Record<string, Kind>> = {
  // Campaign folders (CONTRACT 21.1), elsewhere `folder_id` is a spam-test folder.
  "/api/v1/campaigns": { folder_id: "campaignFolder" },
  "/api/v1/campaigns/update-folder": { folder_id: "campaignFolder" },
  "/api/v1/leads/categories/{category_id}": { category_id: "category" },
  "/api/v1/email-accounts/oauth/sessions/{session_id}": { session_id: "oauthSession" },
  "/api/v1/verify-emails/status": { job_id: "verificationJob" },
};

/**
 * Operations that succeed only with a live mail server behind the caller's mailbox (tested against
 * the lab in test/mail/): with the caller's own ids they must get as far as this refusal.
 */
export const NEEDS_MAIL_SERVER: Record<string, { status: number; error: string | RegExp }> = {
  "POST /api/v1/campaigns/{campaign_id}/reply-email-thread": { status: 400, error: "Email account not found!" },
  "POST /api/v1/email-campaigns/send-email-thread": { status: 400, error: "Email account not found!" },
  "POST /api/v1/campaigns/{campaign_id}/forward-email": { status: 400, error: "Email account not found!" },
  "POST /api/v1/email-campaigns/forward-reply-email": { status: 400, error: "Email account not found!" },
  "POST /api/v1/send-email/initiate": { status: 400, error: "Email account not found!" },
  "POST /api/v1/campaigns/{campaign_id}/send-test-email": {
    status: 400,
    error: "The email account cannot send: it is suspended, failing its connection check, or has no password",
  },
  // The seed's spam tests are manual: Salvo sent no email of theirs and received no copy (CONTRACT 21.6).
  "GET /api/v1/spam-test/report/{spamTestId}/email-content": { status: 404, error: "No email of this run was sent by Salvo" },
  "GET /api/v1/smart-delivery/email-content": { status: 404, error: "No email of this run was sent by Salvo" },
  "GET /api/v1/spam-test/report/{spamTestId}/sender-account-wise/{replyId}/email-headers": { status: 404, error: "Result not found" },
  // A live IMAP read (CONTRACT 21.2): the seed's mailbox names a host with no server behind it, so the read gets as far as connecting.
  "POST /api/v1/email-accounts/{id}/fetch-messages": { status: 400, error: "connection or TLS failure: proxy request failed, cannot connect to the specified address" },
  // Likewise operations that need a record in another state than the seeded one: they get as far as that refusal.
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/resume": { status: 400, error: "Lead is not paused" },
  // The seeded lead replied, which completed its record.
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/pause": { status: 400, error: "Lead is COMPLETED" },
  "PATCH /api/v1/master-inbox/resume-lead": { status: 400, error: "Lead is not paused" },
  // The seed's own campaign is no subsequence of itself.
  "POST /api/v1/master-inbox/push-to-subsequence": { status: 400, error: "sub_sequence_id must be a subsequence of the lead's campaign" },
  // The caller's own mailbox is still attached to its campaign: nothing to move off it (CONTRACT 21.1).
  "POST /api/v1/campaigns/{campaign_id}/reallocate-mailboxes": { status: 400, error: /^Email account \d+ is still attached to this campaign\.$/ },
  // The seeded mailbox signs in with a password: reconnecting it by OAuth is refused (CONTRACT 18.3).
  "POST /api/v1/email-accounts/{id}/oauth/reconnect": { status: 400, error: "This mailbox signs in with a password; update its credentials instead" },
  // The seeded mailbox's warmup is not blocked, so it has no unblock code (the pair is tested in test/warmup/otp.test.ts).
  "POST /api/v1/email-accounts/{id}/send-otp-email": { status: 400, error: "Warmup is not blocked for this mailbox" },
  "POST /api/v1/email-accounts/{id}/verify-otp": { status: 400, error: "No valid OTP exists for this email account." },
};

/** A bare `id` (path or body) names the row of the route it is on. */
const KIND_OF_BARE_ID: [RegExp, Kind][] = [
  [/^\/api\/v1\/campaigns\/folders\//, "campaignFolder"],
  [/^\/api\/v1\/account\/api-keys\//, "accountKey"],
  [/^\/api\/v1\/client\/api-key\//, "clientKey"],
  [/^\/api\/v1\/client\/save$/, "client"],
  [/^\/api\/v1\/client\/\{id\}$/, "client"],
  [/^\/api\/v1\/webhooks?\/|\/webhooks$/, "webhook"],
  [/\/save-search\//, "savedSearch"],
  [/^\/api\/v1\/leads\/(delete|remove)-domain-block-list/, "blockEntry"],
  [/^\/api\/v1\/email-accounts\/tag-manager$/, "tag"],
  [/^\/api\/v1\/email-accounts\//, "mailbox"],
  [/^\/api\/v1\/master-inbox\/ignore-reply$/, "stat"],
  [/^\/api\/v1\/master-inbox\/saved-views\//, "savedView"],
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
  // Recipients' addresses (CONTRACT 21.5), not ids.
  forwardToEmailIds: ["matrix-forward@example.com"],
  // A result of the test named beside it (the test carries the tenancy): the seed has none.
  replyId: "1",
  // An OAuth provider's name (path), not an id: the test deployment has a Google app.
  provider: "google",
  // The OAuth app's client id at the provider.
  oauth_client_id: "matrix-app.apps.googleusercontent.com",
  // The lead filter's (CONTRACT 21.1) categories (the catalogue's), steps and variants: values to match, naming no tenant's rows.
  leadCategoryIds: [1],
  sequenceIds: [1],
  seqVariantIds: [1],
};

function labelValue(apiPath: string, name: string): { value: unknown } | undefined {
  if (KIND_ON_PATH[apiPath]?.[name]) return undefined;
  return name in NOT_TENANT ? { value: NOT_TENANT[name] } : undefined;
}

/** Optional body ids that name one row only together: `lead_id` + `campaign_id` (compat rule C6). */
const COMPANION_IDS: Record<string, string> = { lead_id: "campaign_id", campaign_id: "lead_id" };
const RECORD_IDS = ["email_lead_map_id", "lead_id", "campaign_id"];

/** Values the schema alone cannot make valid (a reachable URL, a cron line, an end after the start, a lead the campaign has, one sender throughout). */
export const VALUE_OVERRIDES: Record<string, unknown> = {
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
  "POST /api/v1/campaigns/tags": [["campaignIds", "campaign_ids"], ["tagIds", "tag_ids"]],
  "DELETE /api/v1/campaigns/tags": [["campaignIds", "campaign_ids"], ["tagIds", "tag_ids"]],
  // A reply named one of two ways: §4's stats_id (with the record), or the hosted id (CONTRACT 21.3).
  "POST /api/v1/master-inbox/ignore-reply": [["stats_id", "id"]],
  "PATCH /api/v1/master-inbox/ignore-reply": [["stats_id", "id"]],
  "POST /api/v1/campaigns/{campaign_id}/forward-email": [["stats_id", "email_stats_id"]],
  "POST /api/v1/email-campaigns/forward-reply-email": [["campaignId", "campaign_id"], ["emailStatsId", "email_stats_id"]],
  "POST /api/v1/send-email/initiate": [["fromEmailId", "email_account_id"]],
  "POST /api/v1/leads/verify": [["campaign_id", "list_id", "lead_ids"]],
};

/** Optional fields an operation needs that its schema cannot say are required (a choice of one among several). */
export const BODY_OVERRIDES: Record<string, Record<string, unknown>> = {
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
  "POST /api/v1/campaigns/{campaign_id}/forward-email": { to_emails: "matrix-forward@example.com" },
  "POST /api/v1/send-email/initiate": { to: "matrix-single@example.com" },
  // Fields that may come under an alias, so the schema cannot require them.
  "PATCH /api/v1/master-inbox/change-read-status": { read_status: true },
  "PATCH /api/v1/master-inbox/update-category": { category_id: 1 },
  "POST /api/v1/master-inbox/create-task": { name: "Matrix task" },
  "POST /api/v1/master-inbox/create-note": { note_message: "Matrix note" },
  "POST /api/v1/master-inbox/set-reminder": { reminder_time: "2027-01-01T09:00:00.000Z" },
  "POST /api/v1/campaigns/{campaign_id}/sequences": {
    sequences: [{ seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Hi", email_body: "Hello" }],
  },
  // The singular alias (CONTRACT 11): the same body, so the matrix tests its scope, not validation.
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
  "PATCH /api/v1/client/{client_id}/code-integrations/{integration_id}": { snippet_name: "Matrix renamed" },
  // The hosted form's flag (required with id; the schema cannot say so).
  "POST /api/v1/master-inbox/ignore-reply": { ignore_reply: true },
  "PATCH /api/v1/master-inbox/ignore-reply": { ignore_reply: true },
  // At least one setting (the schema cannot require one of its optional fields).
  "POST /api/v1/email-accounts/bulk-update-email-account-config": { updateData: { messagePerDay: 50 } },
  // Everything a create needs, so a request naming no mailbox reaches the client check.
  // A new app needs its secret (the schema cannot require it: an update may keep the stored one).
  "PUT /api/v1/email-accounts/oauth/{provider}/app": { oauth_client_secret: "matrix-app-secret" },
  // A grant Salvo can keep (a refresh token, the mail scope).
  "POST /api/v1/email-accounts/save-oauth": {
    token: { access_token: "matrix-access", refresh_token: "matrix-refresh", expiry_date: 1_900_000_000_000, scope: "https://mail.google.com/" },
  },
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

/** Optional query parameters an operation needs with the seed's objects. */
const QUERY_OVERRIDES: Record<string, Record<string, unknown>> = {
  // The own-ids pass saved an OAuth mailbox with the client's app: deleting the app in use takes force (CONTRACT 18.1).
  "DELETE /api/v1/email-accounts/oauth/{provider}/app": { force: "true" },
};

function isIdName(name: string) {
  return name === "id" || /_id$|Id$|_ids$|Ids$/.test(name);
}

function kindOf(path: string, name: string): Kind | undefined {
  if (KIND_ON_PATH[path]?.[name]) return KIND_ON_PATH[path][name];
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
function idValue(document: Document, raw: Schema, id: number | string): unknown {
  if (typeof id === "string") return id;
  const schema = resolve(document, raw);
  if (firstType(schema) === "array") return [idValue(document, schema.items!, id)];
  const first = schema.anyOf ? resolve(document, schema.anyOf.find((s) => firstType(resolve(document, s)))!) : schema;
  return firstType(first) === "string" ? String(id) : id;
}

export interface Slot {
  in: "path" | "query" | "body";
  /** The parameter's name, or the property's path in the body (`events.0.email_lead_map_id`). */
  name: string;
  kind: Kind;
  required: boolean;
  schema: Schema;
}

export interface Case {
  label: string;
  method: string;
  path: string;
  slots: Slot[];
  query: Record<string, unknown>;
  /** Path parameters that are no tenant's id (an OAuth provider's name). */
  pathValues: Record<string, unknown>;
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
export function planOperation(document: Document, path: string, method: string, operation: Operation): Case | undefined {
  const slots: Slot[] = [];
  const query: Record<string, unknown> = {};
  const pathValues: Record<string, unknown> = {};
  const unknown: string[] = [];
  for (const parameter of operation.parameters ?? []) {
    if (parameter.in === "header") continue;
    if (parameter.in === "path" || isIdName(parameter.name)) {
      const label = labelValue(path, parameter.name);
      if (label) (parameter.in === "path" ? pathValues : query)[parameter.name] = label.value;
      else {
        const kind = kindOf(path, parameter.name);
        if (!kind) unknown.push(`${parameter.in} ${parameter.name}`);
        else slots.push({ in: parameter.in as "path" | "query", name: parameter.name, kind, required: parameter.required ?? false, schema: parameter.schema });
      }
    } else if (parameter.required) query[parameter.name] = valueFor(document, parameter.schema, parameter.name);
  }
  Object.assign(query, QUERY_OVERRIDES[`${method} ${path}`]);
  const bodySchema = operation.requestBody?.content["application/json"]?.schema;
  let body: Record<string, unknown> | undefined;
  if (bodySchema) {
    body = valueFor(document, bodySchema, "body") as Record<string, unknown>;
    Object.assign(body, BODY_OVERRIDES[`${method} ${path}`]);
    collectBodyIds(document, path, bodySchema, "", true, body, slots, unknown);
  }
  if (unknown.length) throw new Error(`the matrix does not know what ${unknown.join(", ")} names`);
  if (!slots.length) return undefined;
  return { label: `${method} ${path}`, method, path, slots, query, pathValues, body };
}

export interface Attempt {
  url: string;
  body: Record<string, unknown> | undefined;
}

/** The request with `target` ids in the slots under test and the caller's own ids in the required others. */
export function buildAttempt(document: Document, plan: Case, tested: Slot[], target: Objects | "missing", own: Objects): Attempt {
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
  let url = Object.entries(plan.pathValues).reduce((path, [name, value]) => path.replace(`{${name}}`, encodeURIComponent(String(value))), plan.path);
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

