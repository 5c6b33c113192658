/**
 * What the reference page says about each operation, keyed "METHOD /path" as /openapi.json names it:
 * a stable camelCase `operationId`, a `description` (what it does, its rules, its notable errors)
 * and, for some bodies, a hand-written request `example`. Kept in one place so the route files stay
 * about behaviour; a route's own createRoute values win (src/ops/openapi-document.ts applies this).
 * Errors every operation shares (401, 422, 429, ...) are in the document's components, so these
 * texts name only the ones that carry a rule of their own. test/openapi-docs.test.ts fails on a key
 * that names no operation and on an operation this file (or its route) leaves undescribed.
 */

export interface OperationDoc {
  operationId: string;
  summary?: string;
  description: string;
  /** A route the hosted service does not have (CONTRACT's "extension"): `x-salvo-extension` in the document. */
  extension?: boolean;
  example?: unknown;
}

const INBOX_TARGET =
  "The conversation is `email_lead_map_id` (number or decimal string), or the lead's record in a campaign given as `lead_id` + " +
  "`campaign_id` (`lead_id` alone → 422). Missing or foreign → 404 `Lead mapping not found`.";

const INBOX_LISTING =
  "Body `{offset?=0, limit?=20 (1–20), filters?, sortBy?}`; query `fetch_message_history=true` adds each thread as `email_history`. " +
  "Filters AND together: `search` (≤ 100 chars, lead email, name or reply text), `campaignId` (≤ 5), `emailAccountId` (≤ 10), " +
  "`emailStatus`, `leadCategories`, `campaignTeamMemberId`, `campaignTagId`, `campaignClientId`, `replyTimeBetween`; over a limit → 422. " +
  "Answers `{messages, total_count, offset, limit}`.";

const DELIVERABILITY =
  "Deliverability routes answer 404 `Deliverability testing is not enabled for this account` when the account does not have it. " +
  "Hosted on the delivery host ({delivery_url}); in Salvo every host is the same origin.";

const ANALYTICS_WINDOW =
  "Window: `start_date`..`end_date` (`YYYY-MM-DD`) as local days in `time_zone` (or `timezone`; IANA, default UTC), DST-correct; " +
  "`campaign_ids`/`client_ids` narrow it to some campaigns or clients. A client key sees its client's campaigns only.";

const CAMPAIGN_ANALYTICS = "Unknown or foreign campaign → 404 `Campaign not found`.";

const ACK = "Answers the Ack `{ok: true, success: true, message}`.";

export const OPERATION_DOCS: Record<string, OperationDoc> = {
  // Operations and admin
  "GET /health": { operationId: "getHealth", description: "No API key. Answers `{ok: true, version}` while the Worker runs, even in maintenance mode." },
  "POST /admin/v1/accounts": {
    operationId: "adminCreateAccount",
    description:
      "Operators only (`Authorization: Bearer <ADMIN_TOKEN>`; every admin route answers 404 while that secret is unset). Creates an account " +
      "and answers 201 with its first account key, shown once. `rate_limit_per_minute`/`rate_limit_burst` override the default budget. " +
      "An email already provisioned → 400.",
    example: { email: "owner@example.com", name: "Owner", deliverability_enabled: true, ignore_ooo_replies: false },
  },
  "POST /admin/v1/accounts/{id}/api-keys": {
    operationId: "adminCreateAccountKey",
    description: "Mints another account key for the account (several may exist); the value is shown once. Unknown account → 404.",
  },
  "GET /admin/v1/accounts/{id}/api-keys": {
    operationId: "adminListAccountKeys",
    description: "The account's keys with their values masked (prefix … last 4).",
  },
  "DELETE /admin/v1/accounts/{id}/api-keys/{key_id}": {
    operationId: "adminRevokeAccountKey",
    description: "Revokes a key, even the account's last one. The key's Durable Object hears it before the answer, so the next request with it gets 401.",
  },
  "PATCH /admin/v1/accounts/{id}": {
    operationId: "adminUpdateAccount",
    description: "`{disabled: true|false}`. While disabled, the account's account keys and client keys answer 401; nothing is deleted.",
    example: { disabled: true },
  },
  "POST /admin/v1/email-accounts/{id}/read-pass": {
    operationId: "adminRunReadPass",
    description:
      "Reads the mailbox's INBOX now (up to 100 new messages): replies, bounces and untracked messages are recorded as the scheduled " +
      "reader would. Unknown mailbox → 404. Wrong admin tokens count as failed authentications of the caller's IP (429 past the limit).",
  },
  "POST /admin/v1/email-accounts/{id}/sender-pass": {
    operationId: "adminRunSenderPass",
    description:
      "Runs the mailbox's sender now and waits for it (`max_sends` 0–50; 0 only looks). Answers what was sent, when it wakes next and the " +
      "time spent, to see why a mailbox does not send. Unknown mailbox → 404.",
  },

  // Account and keys
  "GET /api/v1/account": {
    operationId: "getAccount", extension: true,
    description: "The calling account's settings `{id, email, name, ignore_ooo_replies, deliverability_enabled}`. Account key only.",
  },
  "PATCH /api/v1/account": {
    operationId: "updateAccount", extension: true,
    description:
      "Sets `ignore_ooo_replies`: when on, out-of-office replies (`is_ooo`, or category 6) are flagged ignored and leave `reply_count`. " +
      "Account key only; a client key → 401.",
    example: { ignore_ooo_replies: true },
  },
  "GET /api/v1/account/api-keys": { operationId: "listAccountKeys", extension: true, description: "The account's own account keys, values masked. Account key only." },
  "DELETE /api/v1/account/api-keys/{id}": {
    operationId: "revokeAccountKey", extension: true,
    description: "Revokes one of the account's keys, the calling one included, but never the last (400). It stops working on the next request.",
  },
  "POST /api/v1/client/save": {
    operationId: "saveClient",
    description:
      "Creates a client sub-account, or updates it when `id` names one of the caller's clients (another's → 400). Answers " +
      "`{ok, clientId, id, name, email}`. Account key only.",
    example: { name: "Acme Corp", email: "ops@acme.example" },
  },
  "GET /api/v1/client": { operationId: "listClients", description: "The account's clients as a bare array `[{id, name, email, user_id, created_at}]`, by id. Account key only." },
  "POST /api/v1/client/api-key": {
    operationId: "createClientKey",
    description:
      "Creates a key that acts for one client: it sees and creates only that client's campaigns and what hangs off them. `keyName` 1–100 " +
      "chars of letters, digits, space, `_`, `-` (else 422); `client_id`/`key_name` are read too. Foreign client → 400 `Client not found`; " +
      "more than 25 keys per client → 400. The value is answered here only.",
    example: { clientId: 1, keyName: "crm-sync" },
  },
  "GET /api/v1/client/api-key": {
    operationId: "listClientKeys",
    description: "Client keys, narrowed by `clientId`, `status` and `keyName` (case-insensitive substring); `api_key` masked as prefix … last 4.",
  },
  "DELETE /api/v1/client/api-key/{id}": {
    operationId: "deleteClientKey",
    description: "Deletes a client key; it is refused from the next request. Unknown or foreign id → 400 `Client API key not found` (this family has no 404).",
  },
  "PUT /api/v1/client/api-key/reset/{id}": {
    operationId: "resetClientKey",
    description: "Gives the key a new value (same id and status) and answers it once; the old value stops working at once. Unknown id → 400.",
  },
  "PUT /api/v1/client/api-key/{id}/status": {
    operationId: "setClientKeyStatus", extension: true,
    description: "`{status: active|inactive}`. An inactive key answers 401 until activated again. Unknown id → 400.",
    example: { status: "inactive" },
  },
  "GET /api/v1/rate-limit": {
    operationId: "getRateLimit", extension: true,
    description:
      "The calling key's budget after this request: `{limit, remaining, reset, burst}`. The same numbers ride on every authenticated " +
      "answer as `X-RateLimit-*` and `RateLimit`/`RateLimit-Policy` headers.",
  },

  // Campaigns
  "POST /api/v1/campaigns/create": {
    operationId: "createCampaign",
    description:
      "Creates a DRAFTED campaign (`name` defaults to `Untitled Campaign`). A client key creates it for its client; an account key may " +
      "name its own `client_id` (foreign → 400 `Client not found`).",
    example: { name: "Q1 outreach", client_id: null },
  },
  "GET /api/v1/campaigns": {
    operationId: "listCampaigns",
    description: "The caller's campaigns as a bare array (read shape with settings and tags); `client_id` narrows. A client key sees its client's only.",
  },
  "GET /api/v1/campaigns/{campaign_id}": {
    operationId: "getCampaign",
    description: "One campaign with its status, settings, schedule (`scheduler_cron_value`) and tags. Foreign → 404.",
  },
  "DELETE /api/v1/campaigns/{campaign_id}": {
    operationId: "deleteCampaign",
    description:
      "Deletes the campaign, its records, sequence, campaign-scope webhooks and mailbox links; the leads stay. ACTIVE → 400 " +
      "`Cannot delete an active campaign. Pause or stop it first.`",
  },
  "POST /api/v1/campaigns/{campaign_id}/status": {
    operationId: "setCampaignStatus",
    description:
      "`START` → ACTIVE, `PAUSED`, `STOPPED` (final: a stopped campaign cannot start again, 400). `PAUSE`, `STOP`, `ACTIVE` and `RESUME` " +
      "are read as their pair. Fires CAMPAIGN_STATUS_CHANGED.",
    example: { status: "START" },
  },
  "PATCH /api/v1/campaigns/{campaign_id}/status": {
    operationId: "patchCampaignStatus",
    description: "The same as `POST .../status` (one client sends PATCH).",
    example: { status: "PAUSED" },
  },
  "POST /api/v1/campaigns/{campaign_id}/tags": {
    operationId: "setCampaignTags", extension: true,
    description: "Replaces the campaign's tags with the names given (created in the account's tag catalogue when new); `[]` clears them.",
    example: { tags: ["q1", "enterprise"] },
  },
  "POST /api/v1/campaigns/{campaign_id}/schedule": {
    operationId: "setCampaignSchedule",
    description:
      "Flat or nested (`{schedule: {...}}`) body. `timezone` (IANA; required until the campaign has a schedule), `days_of_the_week` (0–6, " +
      "0 = Sunday, 7 also Sunday), `start_hour`/`end_hour` (`HH:MM`, end after start), `min_time_btw_emails` (1–1440 min), " +
      "`max_new_leads_per_day` (1–10000), `schedule_start_time`. Absent fields keep their value; a first schedule defaults to Mon–Fri 09:00–17:00.",
    example: { timezone: "Europe/Berlin", days_of_the_week: [1, 2, 3, 4, 5], start_hour: "09:00", end_hour: "17:00", min_time_btw_emails: 10, max_new_leads_per_day: 100 },
  },
  "POST /api/v1/campaigns/{campaign_id}/settings": {
    operationId: "updateCampaignSettings",
    description:
      "Every field optional, absent = unchanged: `name`, `track_settings` (turn off open pixels or link rewriting), `stop_lead_settings`, " +
      "`unsubscribe_text`, plain-text sending, `follow_up_percentage`, `client_id` (foreign → 400), out-of-office handling, domain " +
      "auto-pause and `bounce_autopause_threshold`. " + ACK,
    example: { track_settings: ["DONT_TRACK_EMAIL_OPEN"], stop_lead_settings: "REPLY_TO_AN_EMAIL", unsubscribe_text: "Unsubscribe", follow_up_percentage: 100 },
  },
  "POST /api/v1/campaigns/{campaign_id}/duplicate": {
    operationId: "duplicateCampaign",
    description:
      "Copies the campaign as DRAFTED `<name> (copy)` with its settings, schedule, sequence (new ids), mailboxes and tags, no leads and no " +
      "webhooks; `duplicate_client_label` keeps the client, `duplicate_sub_sequence` copies subsequences. Answers `{ok, newCampaignId, id}`.",
  },
  "POST /api/v1/campaigns/{campaign_id}/team-member": {
    operationId: "setCampaignTeamMember",
    description: "`{teamMemberId}` (or `team_member_id`), null clears. The inbox filter `campaignTeamMemberId` matches it.",
    example: { teamMemberId: 7 },
  },
  "POST /api/v1/campaigns/create-subsequence": {
    operationId: "createSubsequence",
    description:
      "Creates a DRAFTED campaign whose `parent_campaign_id` is the given campaign; leads enter it only through " +
      "`master-inbox/push-to-subsequence`. `condition_events` are stored, not acted on. Foreign parent → 404.",
    example: { parent_campaign_id: 1, subsequence_name: "Interested follow-up" },
  },
  "POST /api/v1/campaigns/{campaign_id}/create-subsequence": {
    operationId: "createCampaignSubsequence",
    description: "`create-subsequence` with the parent in the path (the form two clients use).",
  },
  "GET /api/v1/campaigns/{campaign_id}/leads-export": {
    operationId: "exportCampaignLeads",
    description:
      "Every record as `text/csv` (RFC 4180, CRLF, header row; `id` is the lead id, `custom_fields` JSON, values unaltered), streamed " +
      "with `Content-Disposition: attachment`. Errors stay JSON.",
  },

  // Leads in campaigns and events
  "POST /api/v1/campaigns/{campaign_id}/leads": {
    operationId: "addCampaignLeads",
    description:
      "Adds 1–400 leads. A lead is one person per account (by email, case-insensitive); each becomes a DRAFTED record of the campaign. " +
      "Duplicates, leads already in the campaign, invalid emails, block-listed and unsubscribed addresses are counted, not added " +
      "(`settings.ignore_global_block_list`/`ignore_unsubscribe_list` override). `settings.return_lead_ids` adds `emailToLeadIdMap`. " +
      "One flat lead (`email` at the top) is read as a one-lead list.",
    example: {
      lead_list: [{ email: "ann@example.com", first_name: "Ann", last_name: "Lee", company_name: "Acme", custom_fields: { role: "CTO" } }],
      settings: { return_lead_ids: true },
    },
  },
  "POST /api/v1/campaigns/{campaign_id}/leads/bulk": {
    operationId: "addCampaignLeadsBulk",
    description: "Add-leads with the list under `leads` (the form one client uses); same rules and answer.",
    example: { leads: [{ email: "ann@example.com", first_name: "Ann" }] },
  },
  "GET /api/v1/campaigns/{campaign_id}/leads": {
    operationId: "listCampaignLeads",
    description: "The campaign's records, paged by `offset` and `limit` (1–100), narrowed by `status`: `{total_leads, offset, limit, data: [{campaign_lead_map_id, status, lead_category_id, created_at, lead}]}`.",
  },
  "PATCH /api/v1/campaigns/{campaign_id}/leads/{email_lead_map_id}": {
    operationId: "setCampaignLeadState", extension: true,
    description: "Sets a record's `state` directly (an extension for engines that send elsewhere). Foreign record → 404.",
    example: { state: "PAUSED" },
  },
  "POST /api/v1/campaigns/{campaign_id}/events": {
    operationId: "ingestCampaignEvents", extension: true,
    description:
      "Reports what a sending engine did: 1–1000 events (`SENT, OPEN, CLICK, REPLY, BOUNCE, BLOCK, UNSUBSCRIBE`), each naming its record " +
      "by `email_lead_map_id` or `lead_email`. All or nothing: one bad event → 422 with its index. A repeated `event_id` is a no-op " +
      "(counted in `duplicates`); an event without one is stored each time it is sent. Records follow (SENT → INPROGRESS, BOUNCE/BLOCK → BLOCKED, UNSUBSCRIBE → STOPPED), replies join the " +
      "conversation, and each event fans out to webhooks in the same batch.",
    example: {
      events: [
        { event_id: "esp-123", type: "SENT", lead_email: "ann@example.com", occurred_at: "2026-01-25T09:00:00Z", sequence_number: 1, subject: "Quick question" },
        { event_id: "esp-124", type: "REPLY", lead_email: "ann@example.com", occurred_at: "2026-01-25T11:30:00Z", from_email: "ann@example.com", body: "Interested!" },
      ],
    },
  },
  "GET /api/v1/leads/fetch-categories": {
    operationId: "listLeadCategories",
    description: "The lead categories as a bare array with `sentiment_type`. Ids 1–7 are built in (6 = Out Of Office).",
  },
  "GET /api/v1/campaigns/all-leads-activities": {
    operationId: "listAllLeadsActivities",
    description:
      "Per record of the caller's campaigns, its sends with their opens, clicks and reply. `event_time_from`/`event_time_to` (ISO or " +
      "`YYYY-MM-DD`; `to` needs `from`; a bad date → 400), `client_id`, `offset`, `limit` (1–1000). Answers `{data, hasMore}`.",
  },
  "PATCH /api/v1/master-inbox/resume-lead": {
    operationId: "inboxResumeLead",
    description:
      "Resumes a paused record from the inbox: `{campaign_id, email_lead_map_id, resume_delay_days?}`. A `campaign_id` that is not the " +
      "record's → 404; not paused → 400 `Lead is not paused`.",
    example: { campaign_id: 1, email_lead_map_id: 1, resume_delay_days: 2 },
  },
  "POST /api/v1/campaigns/update-lead-email-account": {
    operationId: "updateLeadEmailAccount",
    description:
      "Pins a record to another mailbox of its campaign. The mailbox must be attached (else 400); a record already pinned needs " +
      "`override_lead_email_account: true` (else 400).",
    example: { email_account_id: 1, email_campaign_id: 1, email_lead_id: 1, override_lead_email_account: true },
  },
  "GET /api/v1/leads": {
    operationId: "getLeadByEmail",
    description: "The lead with `email` and its `lead_campaign_data`; no such lead (or a foreign one) → 200 `{}`. Without `email` it answers as `/leads/all`.",
  },
  "GET /api/v1/leads/all": {
    operationId: "listAllLeads",
    description:
      "Every lead by id, keyset-paged: `limit` (1–1000), `lastSeenLeadId`; narrowed by campaign, record state, `emailStatus`, list, client, " +
      "`lead_email` substring and creation dates. Answers `{ok, data: {leads, lastSeenLeadId, hasMore}}`.",
  },
  "GET /api/v1/leads/{lead_id}": {
    operationId: "getLead",
    description: "A lead with its campaigns, the newest record's `status` and the newest category. Missing → 200 `{}`, as by email.",
  },
  "PUT /api/v1/leads/{lead_id}": {
    operationId: "updateLead",
    description:
      "Updates a lead's fields; `custom_fields` merge (a key set to null is removed; ≤ 200 keys). A new `email` already used by another " +
      "lead → 400 `Email already belongs to lead N`. " + ACK,
    example: { first_name: "Ann", company_name: "Acme GmbH", custom_fields: { role: "CEO" } },
  },
  "DELETE /api/v1/leads/{lead_id}": {
    operationId: "deleteLead",
    description: "Removes the lead from every campaign and list, then deletes it; its events stay in the windowed counts. " + ACK,
  },
  "GET /api/v1/campaigns/{campaign_id}/leads/{lead_id}": {
    operationId: "getCampaignLead",
    description: "The lead's record in the campaign with its step, last sent and reply times and mailbox. Lead not in the campaign → 404 `Lead not found in campaign`.",
  },
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}": {
    operationId: "updateCampaignLead",
    description: "Updates the lead (one per account, so every campaign shows the change); `email` may be left out. Rules as `PUT /leads/{lead_id}`.",
    example: { email: "ann@example.com", last_name: "Lee-Smith" },
  },
  "DELETE /api/v1/campaigns/{campaign_id}/leads/{lead_id}": {
    operationId: "deleteCampaignLead",
    description: "Removes the lead's record (and its conversation) from the campaign; its events stay, so windowed counts keep them. " + ACK,
  },
  "GET /api/v1/leads/{lead_id}/campaigns": {
    operationId: "listLeadCampaigns",
    description: "The campaigns the lead is in (bare array, campaign read shape) with its `campaign_lead_map_id`, `lead_status` and category there.",
  },
  "GET /api/v1/leads/{lead_id}/campaign-overview": {
    operationId: "getLeadCampaignOverview",
    description: "Per campaign of the lead: its record's state, step, and sent, open, click and reply counts with the last times.",
  },
  "GET /api/v1/leads/{email_lead_map_id}/sequence-details": {
    operationId: "getLeadSequenceDetails",
    description:
      "Each step of a record's sequence with its variant and whether it was SENT, is SCHEDULED, PENDING or SKIPPED. With `campaignId`, an " +
      "id that is no record of that campaign is tried as a lead id.",
  },
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/pause": {
    operationId: "pauseCampaignLead",
    description: "Pauses the record (from DRAFTED, STARTED or INPROGRESS; PAUSED is a no-op). A final record (COMPLETED, STOPPED, BLOCKED) → 400 `Lead is <STATE>`.",
  },
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/resume": {
    operationId: "resumeCampaignLead",
    description:
      "Returns a paused record to the state it was paused from; the next step is due after `resume_lead_with_delay_days` (0–365) or its " +
      "own delay counted from the pause. Not paused → 400; nothing left to send → 400 `This is the last sequence...`.",
    example: { resume_lead_with_delay_days: 1 },
  },
  "POST /api/v1/campaigns/{campaign_id}/leads/{email_lead_map_id}/manual-complete": {
    operationId: "completeCampaignLead",
    description: "Marks the record COMPLETED (no more steps). The id is a record id; when the campaign has no such record it is tried as a lead id.",
  },
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/unsubscribe": {
    operationId: "unsubscribeCampaignLead",
    description: "Stops the record and records an UNSUBSCRIBE event (source `api`), so `unsubscribed_count` and LEAD_UNSUBSCRIBED follow.",
  },
  "POST /api/v1/leads/{lead_id}/unsubscribe": {
    operationId: "unsubscribeLead",
    description:
      "Unsubscribes the lead everywhere: `is_unsubscribed`, every live record STOPPED with an UNSUBSCRIBE event, later campaign adds " +
      "skip it. Answers `{ok: true}` also when it already was.",
  },
  "PUT /api/v1/leads/{lead_id}/status": {
    operationId: "setLeadStatus",
    description: "`{status}`: `unsubscribed` unsubscribes everywhere; `paused`/`active` pause or resume every record of the lead where allowed; anything else → 422.",
    example: { status: "paused" },
  },
  "POST /api/v1/campaigns/{campaign_id}/leads/{lead_id}/category": {
    operationId: "setCampaignLeadCategory",
    description:
      "Categorises the lead's record: `category_id` (null or `\"\"` clears) or `category` (id or name). `pause_lead` also pauses it. " +
      "Fires LEAD_CATEGORY_UPDATED. Unknown category → 400 `Invalid category - <value>`.",
    example: { category_id: 1, pause_lead: false },
  },
  "GET /api/v1/campaigns/{campaign_id}/leads/{lead_id}/message-history": {
    operationId: "getLeadMessageHistory",
    description:
      "The lead's thread in the campaign, oldest first: every email sent (with open and click counts) and every reply. `event_time_gt` " +
      "keeps later messages; `show_plain_text_response` gives bodies as text. Answers `{history, from, to}`.",
  },
  "POST /api/v1/campaigns/{campaign_id}/message-history-for-leads/{token}": {
    operationId: "getLeadsMessageHistory",
    description:
      "Several leads' threads keyed by lead id. `{token}` is any segment. `lead_ids` 1–100; null or absent = every lead of the campaign " +
      "up to 500 (more → 400 asking for ids).",
    example: { lead_ids: [1, 2] },
  },

  // Block list
  "GET /api/v1/leads/get-domain-block-list": {
    operationId: "listBlockList",
    description: "Global block-list entries by id: `offset`, `limit` (1–1000), `filter_email_or_domain` (substring), `filter_client_id`, `filter_email_with_domain`.",
  },
  "POST /api/v1/leads/add-domain-block-list": {
    operationId: "addToBlockList",
    description:
      "Blocks 1–1000 addresses (with `@`) or domains (lower-cased; scheme and `www.` dropped); duplicates are skipped, a bad item → 422 " +
      "with its index. Nothing is sent to them again, and live records of matching leads become BLOCKED. `client_id` null = whole account.",
    example: { domain_block_list: ["competitor.example", "noreply@partner.example"], client_id: null },
  },
  "DELETE /api/v1/leads/delete-domain-block-list": {
    operationId: "deleteBlockListEntryByQuery",
    description: "Deletes the entry `?id=`; records it blocked stay BLOCKED. Missing → 404 `Block list entry not found`.",
  },
  "DELETE /api/v1/leads/delete-domain-block-list/{id}": {
    operationId: "deleteBlockListEntry",
    description: "Deletes the entry by path id. Missing → 404 `Block list entry not found`.",
  },
  "DELETE /api/v1/leads/remove-domain-block-list": {
    operationId: "removeBlockListDomain",
    description: "Deletes the entry for `{domain, client_id?}` (an address or a domain). Missing → 404.",
    example: { domain: "competitor.example" },
  },
  "POST /api/v1/master-inbox/block-domains": {
    operationId: "inboxBlockDomains",
    description: "Writes the same global block list from the inbox: `{domains (1–1000), source?: manual|bounce|complaint|invalid}`.",
    example: { domains: ["spammy.example"], source: "manual" },
  },

  // Lead lists and CRM tags
  "POST /api/v1/lead-list/assign-tags": {
    operationId: "assignLeadListTags",
    description: "Adds `tagIds` (0–10) and removes `removeTagIds` on 1–10 lists (`{id, tag_ids}` for one list is read too). Unknown tag → 400.",
    example: { listIds: [1], tagIds: [1] },
  },
  "POST /api/v1/lead-list/move-leads": {
    operationId: "moveLeadListLeads",
    description: "Moves leads from `sourceListId` to `targetListId`: `leadIds`, or `allLeads: true`. Foreign list → 404.",
    example: { sourceListId: 1, targetListId: 2, allLeads: true },
  },
  "GET /api/v1/lead-list": {
    operationId: "listLeadLists",
    description: "The caller's lead lists by id: `listName` (substring), `tagIds` (comma-separated), `client_id`, `limit` (1–1000), `offset`.",
  },
  "POST /api/v1/lead-list": {
    operationId: "createLeadList",
    description: "Creates a named list of leads (`listName` 1–255, or `name`). Foreign `client_id` → 400.",
    example: { listName: "Trade show 2026" },
  },
  "GET /api/v1/lead-list/{id}": { operationId: "getLeadList", description: "One list with `lead_count` and tags. Missing or foreign → 404 `Lead list not found`." },
  "PUT /api/v1/lead-list/{id}": { operationId: "renameLeadList", description: "Renames the list (`listName` or `name`).", example: { listName: "Trade show 2026 (Berlin)" } },
  "DELETE /api/v1/lead-list/{id}": { operationId: "deleteLeadList", description: "Deletes the list; its leads remain in the account and their campaigns. " + ACK },
  "GET /api/v1/lead-list/{id}/leads": { operationId: "listLeadListLeads", extension: true, description: "The list's leads by lead id, paged by `offset` and `limit`." },
  "POST /api/v1/lead-list/{id}/import": {
    operationId: "importLeadListLeads",
    description:
      "Imports 1–1000 leads into the list (`leadList`, or `leads`/`lead_list`). New emails create leads; known ones get empty fields " +
      "filled and `custom_fields` merged. Block-listed and invalid addresses are counted, not added, unless the `csvSettings` say otherwise.",
    example: { leadList: [{ email: "ann@example.com", first_name: "Ann" }], fileName: "api-import" },
  },
  "POST /api/v1/lead-list/{id}/import-csv": {
    operationId: "importLeadListCsv",
    description: "Imports a CSV body in the background and answers 202 with the import's id; read progress from `imports/{import_id}`.",
  },
  "GET /api/v1/lead-list/{id}/imports/{import_id}": { operationId: "getLeadListImport", description: "A CSV import's state and counts (rows read, imported, duplicates, invalid)." },
  "POST /api/v1/leads/push-to-campaign": {
    operationId: "pushLeadsToCampaign",
    description:
      "Adds a list's leads (`leadList.listId`), chosen leads (`leadIds`, 1–10000) or every lead (`allLeads`) to a campaign given by " +
      "`campaignId` or `campaignName` (a new name creates a DRAFTED campaign), as add-leads would, without its 400 cap. `move` takes them " +
      "out of the source list. None of listId/leadIds/allLeads → 422.",
    example: { campaignId: 1, action: "copy", leadList: { listId: 1 } },
  },
  "POST /api/v1/leads/leads/push-between-lists": {
    operationId: "pushLeadsBetweenLists",
    description: "Copies or moves leads to `toListId`, from `fromListId` or by `leadIds` (one of them required). Answers `{total_leads_moved}`.",
    example: { action: "copy", toListId: 2, fromListId: 1 },
  },
  "POST /api/v1/leads/push-to-list": {
    operationId: "pushLeadsToList",
    description: "Adds leads (`leadIds` or `allLeads`) to a list; `move` also takes them out of their other lists.",
    example: { listId: 1, leadIds: [1, 2] },
  },
  "POST /api/v1/leads/campaign/push-to-list": {
    operationId: "pushCampaignLeadsToList",
    description: "Adds the leads of the given records (`leadMapIds` or `allLeads`) to a list and deletes those records from the campaign.",
    example: { campaignId: 1, listId: 1, allLeads: true },
  },
  "GET /api/v1/crm/leads/tags": { operationId: "listLeadTags", description: "With `leadId`, that lead's tags with their `tag_mapping_id`; without, every tag the caller may use." },
  "POST /api/v1/crm/leads/tags": {
    operationId: "tagLead",
    description: "Puts tags on a lead; a tag it already has stays once. Unknown tag → 400, foreign lead → 404.",
    example: { leadId: 1, tagIds: [1] },
  },
  "DELETE /api/v1/crm/leads/tags/{tagMappingId}": { operationId: "untagLead", description: "Takes one tag off a lead by its `tag_mapping_id`." },

  // Analytics (campaign)
  "GET /api/v1/campaigns/{campaign_id}/analytics-by-date": {
    operationId: "getCampaignAnalyticsByDate",
    description:
      "Campaign counts for `start_date`..`end_date` (`YYYY-MM-DD`, required) in `time_zone` (IANA, default UTC), DST-correct. Every count is " +
      "a decimal string. End before start → 400; more than 30 days → 400 `Invalid start_date & end_date range...`. " + CAMPAIGN_ANALYTICS,
  },
  "GET /api/v1/campaigns/{campaign_id}/analytics": {
    operationId: "getCampaignAnalytics",
    description: "Lifetime counts of the campaign as decimal strings, with `campaign_lead_stats` (records by state, interested, revenue) as numbers. " + CAMPAIGN_ANALYTICS,
  },
  "GET /api/v1/campaigns/{campaign_id}/top-level-analytics-by-date": {
    operationId: "getCampaignTopLevelAnalyticsByDate",
    description: "The campaign's figures for `start_date`..`end_date` (required, ≤ 366 days) in `time_zone`, counts as strings. " + CAMPAIGN_ANALYTICS,
  },
  "GET /api/v1/campaigns/{campaign_id}/statistics": {
    operationId: "getCampaignStatistics",
    description:
      "One row per sent email with its open, click and reply times, paged by `offset`/`limit` (1–1000); narrowed by " +
      "`email_sequence_number`, `email_status` and send-time dates. A reply is credited to the latest send before it only. " + CAMPAIGN_ANALYTICS,
  },
  "GET /api/v1/campaigns/{campaign_id}/leads-statistics": {
    operationId: "getCampaignLeadsStatistics",
    description: "Per record: sent, open, click and reply counts and its event history; `event_time_gt` keeps records with a later event. Paged (`limit` 1–100). " + CAMPAIGN_ANALYTICS,
  },
  "GET /api/v1/campaigns/{campaign_id}/lead-statistics": {
    operationId: "getCampaignLeadStatistics",
    description: "The same as `leads-statistics` (the name one client uses). " + CAMPAIGN_ANALYTICS,
  },
  "GET /api/v1/campaigns/{campaign_id}/mailbox-statistics": {
    operationId: "getCampaignMailboxStatistics",
    description: "Per sending mailbox: its sends and the outcomes credited to them; `start_date` and `end_date` both or neither (one alone → 400). " + CAMPAIGN_ANALYTICS,
  },
  "GET /api/v1/campaigns/{campaign_id}/sequence-analytics": {
    operationId: "getCampaignSequenceAnalytics",
    description: "Per sequence step and A/B variant: sends, opens, clicks, replies and bounces in the window. " + CAMPAIGN_ANALYTICS,
  },

  // Analytics (global)
  "GET /api/v1/analytics/overall-stats-v2": { operationId: "getOverallStats", description: "Sent, opened, replied, bounced, positive replies and their rates (`\"12.5%\"`) over the caller's campaigns. " + ANALYTICS_WINDOW },
  "GET /api/v1/analytics/overview": { operationId: "getOverallStatsOverview", description: "Alias of `overall-stats-v2`. " + ANALYTICS_WINDOW },
  "GET /api/v1/analytics/day-wise-overall-stats": { operationId: "getDayWiseOverallStats", description: "Per local day: sent, opened, replied, bounced. " + ANALYTICS_WINDOW },
  "GET /api/v1/analytics/day-wise-overall-stats-by-sent-time": {
    operationId: "getDayWiseOverallStatsBySentTime",
    description: "Per local day of the send: its sends and the opens, replies and bounces that answer them. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/day-wise-positive-reply-stats": {
    operationId: "getDayWisePositiveReplyStats",
    description: "Per local day: replies from records in a positive category (Interested, Meeting Request, Information Request). " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/day-wise-positive-reply-stats-by-sent-time": {
    operationId: "getDayWisePositiveReplyStatsBySentTime",
    description: "Per local day of the send: the positive replies that answer it. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/campaign/list": { operationId: "listAnalyticsCampaigns", description: "The caller's campaigns as `{id, name}`, for pickers." },
  "GET /api/v1/analytics/campaign/overall-stats": { operationId: "getCampaignWisePerformance", description: "Per campaign: the window's figures and rates. " + ANALYTICS_WINDOW },
  "GET /api/v1/analytics/campaign/response-stats": {
    operationId: "getCampaignResponseStats",
    description: "Per campaign: replies by sentiment of the replying record's category (uncategorised counts as neutral). " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/campaign/status-stats": { operationId: "getCampaignStatusStats", description: "How many of the caller's campaigns are in each status present." },
  "GET /api/v1/analytics/campaign/follow-up-reply-rate": {
    operationId: "getFollowUpReplyRate",
    description: "Replies to steps 2 and later per 100 of their sends, one decimal. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/campaign/lead-to-reply-time": {
    operationId: "getLeadToReplyTime",
    description: "Records whose first reply falls in the window, bucketed by time from first send to first reply (0-1h … 7d+). " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/campaign/leads-take-for-first-reply": {
    operationId: "getLeadsTakeForFirstReply",
    description: "Leads sent to per lead that replied, rounded. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/client/list": { operationId: "listAnalyticsClients", description: "The caller's clients as `{id, name}`." },
  "GET /api/v1/analytics/client/month-wise-count": { operationId: "getClientMonthWiseCount", description: "Clients created per month (`YYYY-MM`)." },
  "GET /api/v1/analytics/client/overall-stats": {
    operationId: "getClientWisePerformance",
    description: "Per client: its campaigns' figures in the window and `client_health` (100 % minus the bounce rate); `filter` matches client names. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/lead/overall-stats": {
    operationId: "getLeadOverallStats",
    description: "Leads emailed in the window: `new` (got step 1 in it) and `follow_up`, with percentages. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/lead/category-wise-response": {
    operationId: "getLeadCategoryWiseResponse",
    description: "Records that replied in the window, by their current category, with percentages. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/mailbox/name-wise-health-metrics": {
    operationId: "getMailboxHealthMetrics",
    description: "Per sending mailbox: sent, opened, replied, bounced; `is_bounced=true` keeps mailboxes with bounces. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/mailbox/domain-wise-health-metrics": { operationId: "getDomainHealthMetrics", description: "Per sending domain: sent, opened, replied, bounced. " + ANALYTICS_WINDOW },
  "GET /api/v1/analytics/mailbox/provider-wise-overall-performance": {
    operationId: "getProviderWisePerformance",
    description: "Per mailbox provider (the mailbox `type`), overall and by mailbox tag. " + ANALYTICS_WINDOW,
  },
  "GET /api/v1/analytics/mailbox/overall-stats": {
    operationId: "getMailboxOverallStats",
    description: "The caller's current mailboxes: connected, in use by a campaign, disconnected, enabled without warmup.",
  },
  "GET /api/v1/analytics/team-board/overall-stats": {
    operationId: "getTeamBoardStats",
    description: "Per campaign team member: leads, campaigns, replies, positive replies, rates and average reply time. " + ANALYTICS_WINDOW,
  },

  // Master inbox
  "GET /api/v1/master-inbox/untracked-replies": {
    operationId: "listUntrackedReplies",
    description:
      "Messages the mailbox reader found that answer no campaign email, newest first: `limit` (1–100), `offset`, `from_email`, " +
      "`to_email`, `subject_line`; `fetchBody`/`fetchAttachments` add bodies and attachment metadata.",
  },
  "POST /api/v1/master-inbox/inbox-replies": {
    operationId: "listInboxReplies",
    description: "The active inbox: conversations (records with a reply) not archived and not snoozed. " + INBOX_LISTING,
    example: { offset: 0, limit: 20, filters: { emailStatus: "Replied" }, sortBy: "REPLY_TIME_DESC" },
  },
  "POST /api/v1/master-inbox/archived": { operationId: "listArchivedConversations", description: "Archived conversations. " + INBOX_LISTING },
  "POST /api/v1/master-inbox/snoozed": {
    operationId: "listSnoozedConversations",
    description: "Conversations snoozed until a future time; a snooze whose time has come is back in the inbox at once. " + INBOX_LISTING,
  },
  "POST /api/v1/master-inbox/unread-replies": { operationId: "listUnreadReplies", description: "Active conversations not read yet. " + INBOX_LISTING },
  "POST /api/v1/master-inbox/important": { operationId: "listImportantConversations", description: "Records marked important, not archived. " + INBOX_LISTING },
  "POST /api/v1/master-inbox/scheduled": {
    operationId: "listScheduledReplies",
    description: "Records with a reply queued for later, soonest first (`SCHEDULED_TIME_ASC`); rows add `scheduled_time` and `scheduled_message`. " + INBOX_LISTING,
  },
  "POST /api/v1/master-inbox/reminders": {
    operationId: "listReminders",
    description: "Records with a reminder, soonest first; rows add `reminder_time`, `reminder_message` and `is_overdue`. " + INBOX_LISTING,
  },
  "POST /api/v1/master-inbox/sent": {
    operationId: "listSentConversations",
    description: "Every record an email was sent to, replied or not (`campaignId` ≤ 15, `emailAccountId` ≤ 100 here). " + INBOX_LISTING,
  },
  "POST /api/v1/master-inbox/assigned-me": {
    operationId: "listAssignedConversations",
    description: "Conversations assigned to a team member; keys carry no user, so `filters.campaignTeamMemberId` names whose. " + INBOX_LISTING,
  },
  "POST /api/v1/master-inbox/views": {
    operationId: "listInboxView",
    description: "Active conversations; `filters.subSequenceId` keeps the records of those subsequences. " + INBOX_LISTING,
  },
  "PATCH /api/v1/master-inbox/change-read-status": {
    operationId: "setConversationReadStatus",
    description: "`read_status` (or `is_read`) true/false. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, read_status: true },
  },
  "PATCH /api/v1/master-inbox/update-category": {
    operationId: "setConversationCategory",
    description:
      "`category_id` (null or `\"\"` clears; `category` may be a name). Fires LEAD_CATEGORY_UPDATED; unknown category → 400. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, category_id: 1 },
  },
  "POST /api/v1/master-inbox/update-team-member": {
    operationId: "setConversationTeamMember",
    description: "`team_member_id`, null clears. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, team_member_id: 7 },
  },
  "POST /api/v1/master-inbox/snooze": {
    operationId: "snoozeConversation",
    description: "Hides the conversation until `snoozed_until` (must be in the future, else 422); a cron and every listing bring it back then. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, snoozed_until: "2030-01-25T09:00:00.000Z" },
  },
  "POST /api/v1/master-inbox/unsnooze": { operationId: "unsnoozeConversation", description: "Back to the inbox now. " + INBOX_TARGET, example: { email_lead_map_id: 1 } },
  "POST /api/v1/master-inbox/archive": { operationId: "archiveConversation", description: "Moves the conversation to the archive. " + INBOX_TARGET, example: { email_lead_map_id: 1 } },
  "POST /api/v1/master-inbox/unarchive": { operationId: "unarchiveConversation", description: "Back from the archive. " + INBOX_TARGET, example: { email_lead_map_id: 1 } },
  "PATCH /api/v1/master-inbox/mark-important": {
    operationId: "markConversationImportant", extension: true,
    description: "`is_important` (default true): the important view. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, is_important: true },
  },
  "POST /api/v1/master-inbox/ignore-reply": {
    operationId: "ignoreReply", extension: true,
    description: "Flags one reply (`stats_id`) ignored by hand, so it leaves `reply_count`. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, stats_id: "1" },
  },
  "POST /api/v1/master-inbox/create-task": {
    operationId: "createTask",
    description: "A task on a lead's record: `name` (or `title`), `priority`, `due_date` (any ISO date), `description?`. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, name: "Call back", priority: "HIGH", due_date: "2030-01-26T10:00:00Z" },
  },
  "GET /api/v1/master-inbox/tasks": { operationId: "listRecordTasks", extension: true, description: "The tasks of one record (`email_lead_map_id`), oldest first. Foreign → 404." },
  "POST /api/v1/master-inbox/create-note": {
    operationId: "createNote",
    description: "A note on the conversation: `note_message` 1–5000 chars (or `note`). Read back with `/crm/leads/notes/{lead_id}`. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, note_message: "Asked for pricing in March" },
  },
  "POST /api/v1/master-inbox/set-reminder": {
    operationId: "setReminder",
    description: "One reminder per record (a new one replaces it): `message` 1–1000, `reminder_time` (ISO; a past time is kept as overdue). Nothing is notified. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, message: "Follow up", reminder_time: "2030-01-27T09:00:00Z" },
  },
  "PATCH /api/v1/master-inbox/update-revenue": {
    operationId: "setConversationRevenue",
    description: "`revenue` ≥ 0 (number or numeric string; negative → 422), two decimals kept; analytics sum it. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, revenue: 1250.5 },
  },
  "GET /api/v1/crm/leads/notes/{lead_id}": { operationId: "listLeadNotes", description: "A lead's notes in every campaign, oldest first. Foreign lead → 404." },
  "GET /api/v1/crm/leads/tasks/{lead_id}": { operationId: "listLeadTasks", description: "A lead's tasks in every campaign, oldest first. Foreign lead → 404." },
  "POST /api/v1/master-inbox/push-to-subsequence": {
    operationId: "pushToSubsequence",
    description:
      "Moves a lead from its campaign into one of that campaign's subsequences (else 400); already pushed → 400. " + INBOX_TARGET,
    example: { email_lead_map_id: 1, sub_sequence_id: 2, sub_sequence_delay_time: 0, stop_lead_on_parent_campaign_reply: true },
  },
  "GET /api/v1/master-inbox/{email_lead_map_id}": { operationId: "getConversation", description: "One conversation with its whole thread (`email_history` always included). Missing → 404 `Lead mapping not found`." },
  "POST /api/v1/campaigns/{campaign_id}/reply-email-thread": {
    operationId: "replyEmailThread",
    description:
      "Replies in the lead's thread from the mailbox that wrote to it (`Re:` subject, `In-Reply-To`/`References`), stored as a SENT " +
      "message of the thread. Unknown `email_stats_id` → 404 `Email stats not found`; the mailbox deleted, suspended or failing → 400; " +
      "recipient block-listed → 400; the mail server refusing → 502 with its words. Progress: `master-inbox/reply-status`.",
    example: { email_stats_id: "1", email_body: "<p>Thanks Ann, does Tuesday work?</p>", add_signature: true },
  },
  "POST /api/v1/campaigns/{campaign_id}/send-test-email": {
    operationId: "sendCampaignTestEmail",
    description:
      "Sends step `sequenceNumber` as the lead `leadId` would get it (their variant, spintax and fields, the mailbox's signature, " +
      "threaded on what they were already sent) to `customEmailAddress`, or to the lead. Nothing is recorded: no message, event, " +
      "webhook or analytics, no tracking, and the unsubscribe link is a mailto. From `selectedEmailAccountId`, else the lead's " +
      "mailbox in the campaign, else its first that can send (none → 400). Unknown step → 404; the lead unsubscribed (with no " +
      "`customEmailAddress`) or the recipient block-listed → 400; the mail server refusing → 502 with its words.",
    example: { leadId: 17, sequenceNumber: 1, customEmailAddress: "me@yourdomain.example" },
  },
  "GET /api/v1/master-inbox/reply-status": {
    operationId: "getReplyStatus",
    description: "Where a reply sent through `reply-email-thread` stands (`SCHEDULED`, `QUEUED`, `COMPLETED`, `FAILED`), by its `message_id`. Unknown → 404.",
  },

  // Webhooks
  "GET /api/v1/webhook/{id}": { operationId: "getWebhook", description: "A webhook of any scope: `{ok, data: Webhook}` with `event_type_map`, `category_id_map` and their array forms." },
  "GET /api/v1/campaigns/{campaign_id}/webhooks": { operationId: "listCampaignWebhooks", description: "The campaign's campaign-scope webhooks as a bare array, by id." },
  "POST /api/v1/campaigns/{campaign_id}/webhooks": {
    operationId: "saveCampaignWebhook",
    description:
      "Creates a campaign webhook (no `id`, or `id: null`) and answers its signing secret `whsec_…` once; with an `id`, updates it. " +
      "`webhook_url`: https, no credentials, no IP literal, no local-only name, at most 2048 characters (else 422). `event_types`: kinds " +
      "or their aliases (else 422 `Invalid event_types - <name>`). `categories` (ids or names) limit EMAIL_REPLY and LEAD_CATEGORY_UPDATED. " +
      "`secret_key` is your own token, echoed in payloads. 503 without SECRETS_KEY.",
    example: { id: null, name: "CRM sync", webhook_url: "https://hooks.example.com/salvo", event_types: ["EMAIL_REPLY", "LEAD_CATEGORY_UPDATED"], categories: [1, 2] },
  },
  "DELETE /api/v1/campaigns/{campaign_id}/webhooks": { operationId: "deleteCampaignWebhookByBody", description: "Deletes the campaign webhook `{id}` named in the body.", example: { id: 1 } },
  "DELETE /api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}": { operationId: "deleteCampaignWebhook", description: "Deletes a campaign webhook; deliveries already queued are still tried." },
  "POST /api/v1/campaigns/{campaign_id}/webhooks/{webhook_id}/rotate-secret": {
    operationId: "rotateCampaignWebhookSecret", extension: true,
    description: "Replaces the signing secret and answers the new one once; for 24 h deliveries carry both signatures, space-separated.",
  },
  "GET /api/v1/campaigns/{campaign_id}/webhooks/summary": {
    operationId: "getCampaignWebhookSummary",
    description: "Delivery counts of the campaign's webhooks by state and event kind, for `fromTime`..`toTime`; `total`, `success`, `failed` also at the top.",
  },
  "POST /api/v1/campaigns/{campaign_id}/webhooks/retrigger-failed-events": {
    operationId: "retriggerFailedWebhookEvents",
    description: "Queues again every failed delivery of the campaign in `fromTime`..`toTime`; answers `{ok, requeued}`.",
    example: { fromTime: "2026-01-01T00:00:00Z", toTime: "2026-01-31T23:59:59Z" },
  },
  "POST /api/v1/campaigns/{campaign_id}/retrigger-webhooks": {
    operationId: "retriggerWebhooks",
    description: "Alias of `webhooks/retrigger-failed-events`; without a body, every failed delivery of the campaign.",
  },
  "POST /api/v1/webhook/create": {
    operationId: "createWebhook",
    description:
      "Creates a webhook of any scope: `association_type` user (every campaign), client (`client_id`) or campaign (`email_campaign_id`). " +
      "Without `force_create`, a webhook with the same scope, target and URL is updated instead. Event kinds as `event_type_map`, " +
      "`event_types` or `event_type`; URL rules as the campaign route (≤ 2048 characters). A client key cannot create user scope (401). " +
      "The signing secret is answered once, on creation.",
    example: { webhook_url: "https://hooks.example.com/salvo", association_type: "user", name: "All replies", event_types: ["EMAIL_REPLY"] },
  },
  "PUT /api/v1/webhook/update/{id}": {
    operationId: "updateWebhook",
    description: "Changes name, URL, kinds or categories; scope and target are fixed (ignored if sent).",
    example: { name: "Replies and bounces", event_types: ["EMAIL_REPLY", "EMAIL_BOUNCE"] },
  },
  "DELETE /api/v1/webhook/delete": { operationId: "deleteWebhookByBody", description: "Deletes the webhook `{id}` named in the body; queued deliveries are still tried.", example: { id: 1 } },
  "DELETE /api/v1/webhook/delete/{id}": { operationId: "deleteWebhookById", description: "Deletes a webhook of any scope." },
  "GET /api/v1/webhooks": {
    operationId: "listWebhooks", extension: true,
    description: "Every webhook the key sees, of every scope, narrowed by `association_type`, `client_id`, `email_campaign_id`; paged by `offset`/`limit` or `starting_after`.",
  },
  "POST /api/v1/webhooks": {
    operationId: "createWebhookShort",
    description: "`{name, url, events, client_id?}`: client scope with `client_id`, else user scope; otherwise `webhook/create`'s rules.",
    example: { name: "Replies", url: "https://hooks.example.com/salvo", events: ["EMAIL_REPLY"] },
  },
  "PATCH /api/v1/webhooks/{id}": { operationId: "updateWebhookShort", description: "`{name?, url?, events?}`, `webhook/update`'s rules.", example: { events: ["EMAIL_REPLY", "EMAIL_OPEN"] } },
  "DELETE /api/v1/webhooks/{id}": { operationId: "deleteWebhook", description: "Deletes a webhook of any scope." },
  "POST /api/v1/webhook/{id}/rotate-secret": {
    operationId: "rotateWebhookSecret", extension: true,
    description: "Replaces any webhook's signing secret (answered once); for 24 h deliveries carry the old signature beside the new.",
  },
  "GET /api/v1/webhook/{id}/deliveries": {
    operationId: "listWebhookDeliveries", extension: true,
    description: "The webhook's deliveries, newest first, each with its attempts (status code, response time, error) and next retry: `limit` (1–100), `before` cursor, `status`.",
  },
  "GET /api/v1/webhook/{id}/deliveries/{delivery_id}": { operationId: "getWebhookDelivery", extension: true, description: "One delivery with its payload and every attempt." },
  "POST /api/v1/webhook/{id}/deliveries/{delivery_id}/redeliver": {
    operationId: "redeliverWebhookDelivery", extension: true,
    description: "Sends a settled (delivered or failed) delivery again now with the same `webhook-id`. Still pending, or the webhook disabled → 400.",
  },

  // Deliverability
  "GET /api/v1/spam-test/seed/providers": {
    operationId: "listSeedProviders",
    description: "The provider catalogue: regions → groups → providers, each with its string `provider_id` and integer `provider_num`. " + DELIVERABILITY,
  },
  "POST /api/v1/spam-test/folder": {
    operationId: "createSpamTestFolder",
    description: "Creates a folder to group tests (`name`, or `folder_name`/`folderName`). " + DELIVERABILITY,
    example: { name: "January tests" },
  },
  "GET /api/v1/spam-test/folder": { operationId: "listSpamTestFolders", description: "The caller's folders. " + DELIVERABILITY },
  "GET /api/v1/smart-delivery/folders/{folder_id}": { operationId: "getSpamTestFolderWithTests", description: "A folder with its tests, wrapped `{success, data}`. " + DELIVERABILITY },
  "GET /api/v1/spam-test/folder/{folder_id}": { operationId: "getSpamTestFolder", description: "A folder, bare. " + DELIVERABILITY },
  "DELETE /api/v1/spam-test/folder/{folder_id}": { operationId: "deleteSpamTestFolder", description: "Deletes an empty folder; one holding tests → 400. " + DELIVERABILITY },
  "GET /api/v1/spam-test/report/{spamTestId}/sender-accounts": { operationId: "listSpamTestSenderAccounts", description: "The sender accounts of a test. " + DELIVERABILITY },
  "POST /api/v1/spam-test/{spamTestId}/results": {
    operationId: "recordSpamTestResults", extension: true,
    description:
      "Records where test emails landed (for a placement checker): per provider and sender, `folder` inbox|tab|spam|not_received. A " +
      "provider or sender not in the test → 422 naming the result; a `run_no` that has not started → 400. " + DELIVERABILITY,
    example: { results: [{ provider_id: "gmail", sender_email: "sender@yourdomain.example", folder: "inbox" }] },
  },
  "POST /api/v1/smart-delivery/provider-report": {
    operationId: "getProviderReport",
    description: "Placement per provider for a run of a test (default: the latest): `spam_test_id` (or `spamTestId`, `test_id`), `run_no?`. " + DELIVERABILITY,
    example: { spam_test_id: 1 },
  },
  "POST /api/v1/smart-delivery/geo-report": {
    operationId: "smartDeliveryGroupWise",
    description: "Placement per provider group and region, in the /smart-delivery form. " + DELIVERABILITY,
    example: { spam_test_id: 1 },
  },
  "POST /api/v1/smart-delivery/spam-filter": {
    operationId: "smartDeliverySpamFilterDetails",
    description: "Spam filter scores per sender, in the /smart-delivery form. " + DELIVERABILITY,
    example: { spam_test_id: 1 },
  },
  "POST /api/v1/spam-test/report/{spamTestId}/providerwise": { operationId: "getProviderwiseReport", description: "Placement per provider in the hosted service's report form. " + DELIVERABILITY },
  "GET /api/v1/spam-test/report/{spamTestId}/schedule-history": { operationId: "getSpamTestScheduleHistory", description: "Every run of a test with its placement counts. " + DELIVERABILITY },
  "POST /api/v1/spam-test/manual": {
    operationId: "createManualSpamTest",
    description:
      "Creates a one-off test: send the campaign's email to the answered `seed_emails`, then read the reports. `provider_ids` (string " +
      "ids or numbers; unknown → 422 listing the valid ones), `sender_accounts` (1–50), the caller's `campaign_id` (foreign → 404). " + DELIVERABILITY,
    example: {
      test_name: "January check",
      spam_filters: true,
      link_checker: false,
      campaign_id: 1,
      sequence_mapping_id: 1,
      provider_ids: ["gmail", "outlook"],
      sender_accounts: ["sender@yourdomain.example"],
    },
  },
  "POST /api/v1/spam-test/schedule": {
    operationId: "createScheduledSpamTest",
    description:
      "A recurring test: the manual body plus `schedule_start_time`, `test_end_date` (after start), `every_days` (1–30) and " +
      "`scheduler_cron_value` (a cron string, or `{tz, days, startHour}`; top-level `tz`, `days`, `startHour` are read too). A cron " +
      "starts each due run. " + DELIVERABILITY,
    example: {
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
    },
  },
  "POST /api/v1/spam-test/report": {
    operationId: "listSpamTests",
    description: "The caller's tests, newest first, paged by `{limit, offset}`; `testType` manual|automated (auto) narrows. " + DELIVERABILITY,
    example: { limit: 10, offset: 0 },
  },
  "POST /api/v1/spam-test/delete": { operationId: "deleteSpamTests", description: "Deletes the tests `spamTestIds`. " + DELIVERABILITY, example: { spamTestIds: [1] } },
  "GET /api/v1/spam-test/{spamTestId}": { operationId: "getSpamTest", description: "A test with its settings and status (`active`, `completed`, `stopped`). " + DELIVERABILITY },
  "PUT /api/v1/spam-test/{spamTestId}/stop": { operationId: "stopSpamTest", description: "Stops a test: status `stopped`, no further runs. " + DELIVERABILITY },

  // Prospect searches
  "POST /api/v1/search-email-leads/search-filters/save-search": {
    operationId: "saveProspectSearch",
    description:
      "Saves a prospect search for the caller: `search_string` (1–255) and filter arrays (`title`, `country`, `companyDomain`, …) flat or " +
      "under `filters`. Hosted on the prospect host ({prospect_url}); in Salvo every host is the same origin.",
    example: { search_string: "CTOs in Berlin", title: ["CTO"], country: ["Germany"] },
  },
  "GET /api/v1/search-email-leads/search-filters/saved-searches": { operationId: "listProspectSearches", description: "The caller's saved searches, newest first, paged by `limit`/`offset`." },
  "PUT /api/v1/search-email-leads/search-filters/save-search/{id}": { operationId: "renameProspectSearch", description: "Renames a saved search. Foreign → 404.", example: { search_string: "CTOs in Munich" } },
  "DELETE /api/v1/search-email-leads/search-filters/save-search/{id}": { operationId: "deleteProspectSearch", description: "Deletes a saved search. Foreign → 404." },

  // Sequences
  "GET /api/v1/campaigns/{campaign_id}/sequences": {
    operationId: "getCampaignSequences",
    description: "The campaign's steps by `seq_number` with delays (`delay_in_days` and `delayInDays`) and live A/B variants.",
  },
  "POST /api/v1/campaigns/{campaign_id}/sequences": {
    operationId: "saveCampaignSequences",
    description:
      "Replaces the whole sequence (1–20 steps): steps and variants with an `id` update in place, new ones are created, those left out are " +
      "retired (their sends stay in statistics). Variant percentages are weights (all 0 → 422). `{{first_name}}`-style variables and " +
      "`{A|B}` spintax render per lead. ACTIVE campaign → 400 `Pause the campaign before changing its sequences`; an id of another " +
      "campaign → 400.",
    example: {
      sequences: [
        { seq_number: 1, seq_delay_details: { delay_in_days: 0 }, subject: "Quick question, {{first_name}}", email_body: "<p>Hi {{first_name}},</p>" },
        { seq_number: 2, seq_delay_details: { delay_in_days: 3 }, subject: "", email_body: "<p>Any thoughts?</p>" },
      ],
    },
  },

  // Mailboxes
  "POST /api/v1/email-accounts/save": {
    operationId: "saveEmailAccount",
    description:
      "Passwords are write-only: they read back as `********`, and posting that (or nothing) keeps the stored one. A connection check runs " +
      "in the background. `smtp_port` 25 → 422; local or private hosts → 422. 503 `Credential storage is not configured` without SECRETS_KEY.",
    example: {
      from_name: "Ann from Acme",
      from_email: "ann@acme.example",
      user_name: "ann@acme.example",
      password: "app-password",
      smtp_host: "smtp.acme.example",
      smtp_port: 465,
      imap_host: "imap.acme.example",
      imap_port: 993,
      max_email_per_day: 100,
    },
  },
  "POST /api/v1/email-accounts/save-oauth": {
    operationId: "saveOauthEmailAccount",
    description: "A Gmail or Outlook mailbox from OAuth material; the token is stored encrypted and never answered.",
    example: {
      from_name: "Ann from Acme",
      from_email: "ann@acme.example",
      username: "ann@acme.example",
      type: "GMAIL",
      token: { refresh_token: "1//0g-refresh-token", expiry_date: 1769331600000, scope: "https://mail.google.com/", token_type: "Bearer" },
    },
  },
  "POST /api/v1/tags": { operationId: "createTag", description: "Creates a tag `{name (1–50), color? #RRGGBB}` in the account's catalogue; an existing name answers that tag.", example: { name: "warm", color: "#4CAF50" } },
  "POST /api/v1/email-accounts/tag-manager": { operationId: "saveTag", description: "Updates the tag `id`, or creates one without it. Foreign id → 404 `Tag not found`; a name another tag has → 400.", example: { name: "warm", color: "#4CAF50" } },
  "GET /api/v1/email-accounts/tags": { operationId: "listTags", description: "The account's tag catalogue (shared by mailboxes and campaigns)." },
  "POST /api/v1/email-accounts/tag-mapping": {
    operationId: "tagEmailAccounts",
    description: "Gives mailboxes (`email_account_ids` 1–25, or `emails`) tags; idempotent. An unknown mailbox or tag → 400 naming it.",
    example: { email_account_ids: [1], tag_ids: [1] },
  },
  "DELETE /api/v1/email-accounts/tag-mapping": { operationId: "untagEmailAccounts", description: "Takes tags off mailboxes; idempotent.", example: { email_account_ids: [1], tag_ids: [1] } },
  "POST /api/v1/email-accounts/tag-list": {
    operationId: "listEmailAccountTags",
    description: "The tags of mailboxes named by address (`email_ids`, 1–100); addresses without a mailbox are left out.",
    example: { email_ids: ["ann@acme.example"] },
  },
  "POST /api/v1/email-accounts/reconnect-failed-email-accounts": {
    operationId: "reconnectEmailAccounts",
    description: "Queues a connection check for the given mailboxes, or every one whose last check failed; answers how many.",
  },
  "GET /api/v1/email-accounts": {
    operationId: "listEmailAccounts",
    description: "The caller's mailboxes by id, paged (`offset`, `limit` 1–100), with send counts and warmup settings; passwords masked.",
  },
  "PUT /api/v1/email-accounts/suspend/{id}": { operationId: "suspendEmailAccount", description: "Suspends a mailbox: it sends nothing and rotation skips it." },
  "DELETE /api/v1/email-accounts/unsuspend/{id}": { operationId: "unsuspendEmailAccount", description: "Lifts a suspension: the mailbox sends again and rotation may pick it." },
  "GET /api/v1/email-accounts/{id}": { operationId: "getEmailAccount", description: "A mailbox; `fetch_campaigns` and `fetch_tags` add its campaign ids and tags." },
  "POST /api/v1/email-accounts/{id}": {
    operationId: "updateEmailAccount",
    description: "Updates a mailbox (absent fields unchanged; `********` keeps a password). A credential change re-runs the connection check.",
    example: { max_email_per_day: 150, signature: "<p>Ann</p>" },
  },
  "DELETE /api/v1/email-accounts/{id}": { operationId: "deleteEmailAccount", description: "Deletes a mailbox: it leaves its campaigns and records pinned to it go back to rotation." },
  "POST /api/v1/email-accounts/{id}/warmup": {
    operationId: "setEmailAccountWarmup",
    description: "Stores warmup settings (shown in `warmup_details`); Salvo runs no warmup network, so they change nothing sent.",
    example: { warmup_enabled: true, total_warmup_per_day: 20, daily_rampup: 2 },
  },
  "GET /api/v1/email-accounts/{id}/warmup-stats": { operationId: "getEmailAccountWarmupStats", description: "Warmup statistics of the last 7 UTC days; all 0, as Salvo runs no warmup network." },
  "GET /api/v1/campaigns/{campaign_id}/email-accounts": { operationId: "listCampaignEmailAccounts", description: "The mailboxes the campaign sends through (bare array); `include_tags` adds tags." },
  "POST /api/v1/campaigns/{campaign_id}/email-accounts": {
    operationId: "attachCampaignEmailAccounts",
    description: "Attaches mailboxes (`email_account_ids` 1–100, or one `email_account_id`); already attached is a no-op. A mailbox the caller cannot see → 400.",
    example: { email_account_ids: [1] },
  },
  "DELETE /api/v1/campaigns/{campaign_id}/email-accounts": {
    operationId: "detachCampaignEmailAccounts",
    description: "Detaches the mailboxes named in the body; not attached is a no-op.",
    example: { email_account_ids: [1] },
  },
  "DELETE /api/v1/campaigns/{campaign_id}/email-accounts/{email_account_id}": { operationId: "detachCampaignEmailAccount", description: "Detaches one mailbox; not attached is a no-op." },
};
