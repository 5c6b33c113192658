import { createCampaign, ingestOk } from "../campaigns/fixtures";
import { completedReplay, envOfId, isCategorised, personOf, webhookOwner } from "../db";
import { ADMIN_TOKEN, callJson, createClient, createClientKey, env, fileShard, provisionAccount } from "../helpers";
import { shardCount } from "../../src/platform/shards";
import { insertDelivery } from "../webhooks/fixtures";
import { parseMessage } from "../../src/mail/parsed";
import { recordInbound } from "../../src/replies/inbound";
import { BODY_OVERRIDES, MISSING, VALUE_OVERRIDES, type Kind, type Objects } from "./plan";

/** The matrix's tenants, each with one object of every kind the matrix names, made through the API. */

const api = <T>(apiKey: string, path: string, body?: unknown, method = body === undefined ? "GET" : "POST") =>
  callJson<T>(path, { apiKey, method, body });

async function ok<T>(promise: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const { status, body } = await promise;
  if (status !== 200) throw new Error(`${what} failed with ${status}: ${JSON.stringify(body)}`);
  return body;
}

async function created<T>(promise: Promise<{ status: number; body: T }>, what: string): Promise<T> {
  const { status, body } = await promise;
  if (status !== 201) throw new Error(`${what} failed with ${status}: ${JSON.stringify(body)}`);
  return body;
}

export interface SeedOptions {
  /** File the spam test in the seed's folder (a fresh seed for the own-ids pass leaves the folder empty, so it may be deleted). */
  fileTheTest?: boolean;
  /** The account's own key: client keys cannot create lead categories, so the account makes the seed's. */
  accountApiKey?: string;
  /** Wait for the seed's background work (the reply's categorisation) to end, before the write log is read. */
  settle?: boolean;
  /** The kinds one operation needs (a fresh seed for it): the reply-categorisation and OAuth objects are made only then. */
  only?: Set<Kind>;
}

/** One object of every kind, created through the API with `apiKey` (an account key or a client key). */
export async function seed(apiKey: string, extra: { client: number; clientKey: number; accountKey: number }, options: SeedOptions = {}): Promise<Objects> {
  const { fileTheTest = true, accountApiKey = apiKey, settle = fileTheTest, only } = options;
  const wanted = (kind: Kind) => !only || only.has(kind);
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
  const category = wanted("category")
    ? (await created(api<{ data: { id: number } }>(accountApiKey, "/api/v1/leads/categories", { name: `Matrix ${crypto.randomUUID()}` }), "lead category")).data.id
    : MISSING;
  const promptTemplate = wanted("promptTemplate")
    ? (
        await created(
          api<{ data: { template: { id: number } } }>(apiKey, `/api/v1/campaigns/${campaign}/prompt-template`, { prompt_content: "Matrix prompt", categories: [1] }),
          "prompt template",
        )
      ).data.template.id
    : MISSING;
  const replay = wanted("replay") ? await completedReplay(campaign) : MISSING;
  // An OAuth consent session (pending: the test deployment's Google app answers no token).
  const oauthSession = wanted("oauthSession")
    ? (await ok(api<{ session_id: string }>(apiKey, "/api/v1/email-accounts/oauth/google/init", {}), "OAuth consent session")).session_id
    : String(MISSING);
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
  const owner = await webhookOwner(webhook.data.id);
  const { deliveryId: delivery } = await insertDelivery({ accountId: owner, webhookId: webhook.data.id, campaignId: campaign, eventType: "EMAIL_REPLY", payload: {}, status: "failed", nextAttemptAt: null });
  const folder = await ok(api<{ id: number }>(apiKey, "/api/v1/spam-test/folder", { name: "Matrix folder" }), "folder");
  const campaignFolder = (await ok(api<{ data: { id: number } }>(apiKey, "/api/v1/campaigns/folders", { name: "Matrix campaign folder" }), "campaign folder")).data.id;
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
  const person = await personOf(lead);
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
  // A verification job over the seed's leads, ended before the matrix compares snapshots.
  const verificationJob = wanted("verificationJob")
    ? (await api<{ job_id: string }>(apiKey, "/api/v1/leads/verify", { campaign_id: campaign, recheck_after_days: 0 })).body.job_id
    : String(MISSING);
  for (let i = 0; verificationJob !== String(MISSING) && i < 100; i++) {
    const { status } = await ok(api<{ status: string }>(apiKey, `/api/v1/verify-emails/status?job_id=${verificationJob}`), "verification progress");
    if (status === "completed") break;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  const tag = tags.tags[0]!.id;
  await ok(api(apiKey, "/api/v1/crm/leads/tags", { leadId: person, tagIds: [tag] }), "lead tag");
  const tagMapping = (await ok(api<{ data: { tag_mapping_id: number }[] }>(apiKey, `/api/v1/crm/leads/tags?leadId=${person}`), "lead tags")).data[0]!.tag_mapping_id;
  // A web app session opened with this key (its id only: the matrix calls with keys).
  const signedIn = await api<{ data: { id: number } }>(apiKey, "/api/v1/sessions", {});
  if (signedIn.status !== 201) throw new Error(`sign-in failed with ${signedIn.status}`);
  const session = signedIn.body.data.id;
  // A client's code snippet (account keys only), in the seed's client.
  const codeIntegration = wanted("codeIntegration")
    ? (await created(api<{ data: { id: number } }>(accountApiKey, `/api/v1/client/${extra.client}/code-integrations`, { snippet_name: "Matrix", snippet_code: "<!-- matrix -->" }), "code integration")).data.id
    : MISSING;
  // An untracked reply the seed's mailbox received (the reader's own path), to associate with the lead (CONTRACT 21.3).
  const untrackedReply = wanted("untrackedReply") ? await receiveUntracked(mailbox.id) : MISSING;
  // A saved view of the master inbox (CONTRACT 21.3).
  const savedView = (await created(api<{ data: { id: number } }>(apiKey, "/api/v1/master-inbox/saved-views", { name: "Matrix view", filters: {} }), "saved view")).data.id;
  // The reply is categorised in the background (src/triage/): let that end before the matrix reads the write log.
  for (let i = 0; settle && i < 200 && !(await isCategorised(stat)); i++) await new Promise((resolve) => setTimeout(resolve, 25));
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
    campaignFolder,
    spamTest: Number(spamTest.id),
    savedSearch: search.data.id,
    leadList,
    leadImport,
    tagMapping,
    delivery,
    blockEntry: entries[0]!.id,
    category,
    promptTemplate,
    replay,
    oauthSession,
    codeIntegration,
    savedView,
    untrackedReply,
    verificationJob,
    ...extra,
  };
}

/** A message no campaign email threads, read by the mailbox: it lands in the untracked list. */
async function receiveUntracked(mailboxId: number): Promise<number> {
  // The mailbox's id names its shard: the seeded account may be on either.
  const shardEnv = await envOfId(mailboxId);
  const mailbox = (await shardEnv.DB.prepare("SELECT account_id, client_id, from_email FROM email_accounts WHERE id = ?").bind(mailboxId).first<{ account_id: number; client_id: number | null; from_email: string }>())!;
  const raw = `From: Pat <pat@matrix-untracked.example>\r\nTo: ${mailbox.from_email}\r\nSubject: Hello\r\nMessage-ID: <${crypto.randomUUID()}@matrix.example>\r\n\r\nHello there`;
  await recordInbound(shardEnv, { id: mailboxId, accountId: mailbox.account_id, clientId: mailbox.client_id, fromEmail: mailbox.from_email }, [await parseMessage(raw)], Date.now());
  return (await shardEnv.DB.prepare("SELECT max(id) AS id FROM untracked_replies WHERE email_account_id = ?").bind(mailboxId).first<{ id: number }>())!.id;
}

async function mintAccountKey(accountId: number) {
  const { status, body } = await callJson<{ id: number }>(`/admin/v1/accounts/${accountId}/api-keys`, {
    method: "POST",
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
  });
  if (status !== 201) throw new Error(`minting an account key failed with ${status}`);
  return body.id;
}

export type World = Awaited<ReturnType<typeof tenants>>;

/**
 * Account A (account-level objects, client CA with its objects, client CB with its objects), account
 * B on A's shard, and account D on the other shard: another tenant's ids are refused whether the
 * tenancy rule or the shard keeps them apart.
 */
export async function tenants() {
  const a = await provisionAccount();
  const b = await provisionAccount();
  const d = await provisionAccount({ shard: (fileShard() + 1) % shardCount(env) });
  const aKey = await mintAccountKey(a.id);
  const bKey = await mintAccountKey(b.id);
  const dKey = await mintAccountKey(d.id);
  const ca = await createClient(a.apiKey, "CA", "ca@matrix.example");
  const cb = await createClient(a.apiKey, "CB", "cb@matrix.example");
  const bClient = await createClient(b.apiKey, "B client", "bc@matrix.example");
  const dClient = await createClient(d.apiKey, "D client", "dc@matrix.example");
  const caKey = await createClientKey(a.apiKey, ca);
  const cbKey = await createClientKey(a.apiKey, cb);
  const bClientKey = await createClientKey(b.apiKey, bClient);
  const dClientKey = await createClientKey(d.apiKey, dClient);
  return {
    aObjects: await seed(a.apiKey, { client: ca, clientKey: caKey.id, accountKey: aKey }),
    bObjects: await seed(b.apiKey, { client: bClient, clientKey: bClientKey.id, accountKey: bKey }),
    caObjects: await seed(caKey.api_key, { client: ca, clientKey: caKey.id, accountKey: aKey }, { accountApiKey: a.apiKey }),
    cbObjects: await seed(cbKey.api_key, { client: cb, clientKey: cbKey.id, accountKey: MISSING }, { accountApiKey: a.apiKey }),
    dObjects: await seed(d.apiKey, { client: dClient, clientKey: dClientKey.id, accountKey: dKey }),
    bApiKey: b.apiKey,
    dApiKey: d.apiKey,
    cbApiKey: cbKey.api_key,
  };
}
