import { describe, expect, it, vi } from "vitest";
import { addLeads, createCampaign } from "../campaigns/fixtures";
import { promptTemplatesOf, replaysFailed, storedReplay, uncategorised, webhookDeliveries } from "../db";
import { callJson, createClient, createClientKey, provisionAccount } from "../helpers";
import { callWithEnv, createWebhook } from "../webhooks/fixtures";
import { triageReplies } from "../../src/triage/consumer";
import { applyDryRun } from "../../src/triage/replay";
import { bindings, categorisationOf, recordOf, sentWorld, storeQuietReply } from "./fixtures";

type Json = Record<string, unknown>;

const post = (path: string, apiKey: string, body: unknown, method = "POST") => callJson<Json>(`/api/v1${path}`, { method, apiKey, body });
const get = (path: string, apiKey: string) => callJson<Json>(`/api/v1${path}`, { apiKey });

describe("custom lead categories (CONTRACT 20.1)", () => {
  it("creates, lists, changes and deletes an account's own categories, with the hosted shapes", async () => {
    const { apiKey, id: accountId } = await provisionAccount();
    const created = await post("/leads/categories", apiKey, { name: "  Partner referral ", sentiment_type: "positive", colour_code: "#12ab34" });
    expect(created.status).toBe(201);
    expect(created.body).toEqual({
      ok: true,
      data: { id: expect.any(Number), name: "Partner referral", user_id: accountId, sentiment_type: "positive", colour_code: "#12ab34", created_at: expect.stringMatching(/Z$/) },
    });
    const id = (created.body.data as { id: number }).id;
    expect(id).toBeGreaterThanOrEqual(1001);
    const neutral = await post("/leads/categories", apiKey, { name: "Later", sentiment_type: "neutral" });
    expect(neutral.body.data).toMatchObject({ sentiment_type: null, colour_code: "#f9f1e9" });

    for (const path of ["/leads/fetch-categories", "/leads/categories"]) {
      const listed = (await get(path, apiKey)).body as unknown as Json[];
      expect(listed.map((c) => c.id)).toEqual([1, 2, 3, 4, 5, 6, 7, id, (neutral.body.data as { id: number }).id]);
      expect(listed[0]).toEqual({ id: 1, name: "Interested", created_at: expect.any(String), sentiment_type: "positive" });
      expect(listed[7]).toEqual({ id, name: "Partner referral", created_at: expect.any(String), sentiment_type: "positive", colour_code: "#12ab34", user_id: accountId });
      expect(listed[8]).toMatchObject({ sentiment_type: "neutral" });
    }

    const changed = await post(`/leads/categories/${id}`, apiKey, { name: "Referral", sentiment_type: null }, "PATCH");
    expect(changed.status).toBe(200);
    expect(changed.body.data).toMatchObject({ id, name: "Referral", sentiment_type: null, colour_code: "#12ab34" });
    const deleted = await callJson(`/api/v1/leads/categories/${id}`, { method: "DELETE", apiKey });
    expect(deleted.body).toEqual({ ok: true, message: "Lead category deleted successfully" });
    expect(((await get("/leads/categories", apiKey)).body as unknown as Json[]).map((c) => c.id)).not.toContain(id);
  });

  it("refuses duplicates, built-in and foreign categories, empty changes, bad input and client keys as the contract says", async () => {
    const { apiKey } = await provisionAccount();
    const other = await provisionAccount();
    const mine = ((await post("/leads/categories", apiKey, { name: "Champion" })).body.data as { id: number }).id;
    const theirs = ((await post("/leads/categories", other.apiKey, { name: "Champion" })).body.data as { id: number }).id;
    const duplicate = { error: "A category with this name already exists", ok: false, message: "A category with this name already exists" };
    expect(await post("/leads/categories", apiKey, { name: "CHAMPION" })).toMatchObject({ status: 409, body: duplicate });
    expect(await post("/leads/categories", apiKey, { name: "interested" })).toMatchObject({ status: 409, body: duplicate });
    expect(await post(`/leads/categories/${mine}`, apiKey, { name: "Wrong person" }, "PATCH")).toMatchObject({ status: 409, body: duplicate });
    const builtIn = { error: "Default categories cannot be modified or deleted", ok: false, message: "Default categories cannot be modified or deleted" };
    expect(await post("/leads/categories/4", apiKey, { name: "Stop" }, "PATCH")).toMatchObject({ status: 403, body: builtIn });
    expect((await callJson("/api/v1/leads/categories/6", { method: "DELETE", apiKey })).status).toBe(403);
    const missing = { error: "Lead category not found", ok: false, message: "Lead category not found" };
    expect(await post(`/leads/categories/${theirs}`, apiKey, { name: "Mine now" }, "PATCH")).toMatchObject({ status: 404, body: missing });
    expect(await callJson(`/api/v1/leads/categories/${theirs}`, { method: "DELETE", apiKey })).toMatchObject({ status: 404, body: missing });
    expect(await callJson("/api/v1/leads/categories/999999", { method: "DELETE", apiKey })).toMatchObject({ status: 404 });
    expect((await post(`/leads/categories/${mine}`, apiKey, {}, "PATCH")).status).toBe(400);
    for (const body of [{}, { name: "   " }, { name: "x".repeat(256) }, { name: "A", sentiment_type: "happy" }, { name: "A", colour_code: "red" }]) {
      expect((await post("/leads/categories", apiKey, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await post("/leads/categories/abc", apiKey, { name: "A" }, "PATCH")).status).toBe(422);

    const clientKey = await createClientKey(apiKey, await createClient(apiKey));
    expect(await post("/leads/categories", clientKey.api_key, { name: "From a client" })).toMatchObject({ status: 401, body: { message: "This API key cannot manage lead categories" } });
    expect((await post(`/leads/categories/${mine}`, clientKey.api_key, { name: "x" }, "PATCH")).status).toBe(401);
    expect((await callJson(`/api/v1/leads/categories/${mine}`, { method: "DELETE", apiKey: clientKey.api_key })).status).toBe(401);
    // Client keys read (and assign) the account's categories.
    expect(((await get("/leads/categories", clientKey.api_key)).body as unknown as Json[]).map((c) => c.id)).toContain(mine);
  });

  it("refuses to delete a category a record holds, and deleting one clears it from webhook filters, templates and settings", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const ids = await addLeads(apiKey, campaign, ["held@cat.example"]);
    const keep = ((await post("/leads/categories", apiKey, { name: "Keep" })).body.data as { id: number }).id;
    const drop = ((await post("/leads/categories", apiKey, { name: "Drop" })).body.data as { id: number }).id;
    expect((await post(`/campaigns/${campaign}/leads/${(await recordOf(ids["held@cat.example"]!))!.lead_id}/category`, apiKey, { category_id: keep })).status).toBe(200);
    const refused = await callJson(`/api/v1/leads/categories/${keep}`, { method: "DELETE", apiKey });
    expect(refused).toMatchObject({ status: 409, body: { ok: false, error: expect.stringMatching(/^This category is assigned to some of the leads/) } });

    const hook = await createWebhook(apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"], categories: [1, drop] });
    const template = await post(`/campaigns/${campaign}/prompt-template`, apiKey, { prompt_content: "Sort", categories: [drop, 2] });
    await post(`/campaigns/${campaign}/settings`, apiKey, { ai_categorisation_options: [1, { id: drop, label: "Drop" }, String(drop), "junk"] });
    expect((await callJson(`/api/v1/leads/categories/${drop}`, { method: "DELETE", apiKey })).status).toBe(200);

    const webhook = (await get(`/webhook/${hook.id}`, apiKey)).body.data as { category_id_map: Json };
    expect(webhook.category_id_map).toEqual({ "1": "Interested" });
    const after = (await get(`/campaigns/${campaign}/prompt-template`, apiKey)).body.data as { template: { categories: number[]; version: number; id: number } };
    expect(after.template).toMatchObject({ id: (template.body.data as { template: { id: number } }).template.id, categories: [2], version: 2 });
    const read = (await get(`/campaigns/${campaign}`, apiKey)).body;
    expect(read.ai_categorisation_options).toEqual([1, "junk"]);
  });
});

describe("prompt templates (CONTRACT 20.2)", () => {
  it("saves, reads back the newest, deactivates earlier ones and moves the version on each change", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    expect((await get(`/campaigns/${campaign}/prompt-template`, apiKey)).body).toEqual({ ok: true, success: true, data: { template: null } });
    const first = await post(`/campaigns/${campaign}/prompt-template`, apiKey, { prompt_content: "Be strict.", categories: [1, "2", 1] });
    expect(first.status).toBe(201);
    expect(first.body).toEqual({
      ok: true,
      success: true,
      data: { template: { id: expect.any(Number), categories: [1, 2], prompt_content: "Be strict.", is_active: true, version: 1, created_at: expect.any(String), updated_at: expect.any(String) } },
    });
    const firstId = (first.body.data as { template: { id: number } }).template.id;
    const second = await post(`/campaigns/${campaign}/prompt-template`, apiKey, { prompt_content: "Be kind.", categories: [3] });
    const secondId = (second.body.data as { template: { id: number } }).template.id;
    const active = await promptTemplatesOf(campaign);
    expect(active.map((t) => ({ id: t.id, is_active: t.isActive }))).toEqual([{ id: firstId, is_active: false }, { id: secondId, is_active: true }]);

    expect((await post(`/campaigns/${campaign}/prompt-template/${secondId}`, apiKey, { prompt_content: "Be kinder." }, "PATCH")).body).toEqual({ ok: true, success: true, data: { id: secondId } });
    await post(`/campaigns/${campaign}/prompt-template/${secondId}`, apiKey, { is_active: true }, "PATCH");
    const now = (await get(`/campaigns/${campaign}/prompt-template`, apiKey)).body.data as { template: Json };
    expect(now.template).toMatchObject({ id: secondId, prompt_content: "Be kinder.", version: 2, is_active: true });
    await post(`/campaigns/${campaign}/prompt-template/${firstId}`, apiKey, { is_active: true }, "PATCH");
    const flipped = await promptTemplatesOf(campaign);
    expect(flipped.map((t) => ({ id: t.id, is_active: t.isActive, version: t.version }))).toEqual([
      { id: firstId, is_active: true, version: 1 },
      { id: secondId, is_active: false, version: 2 },
    ]);
  });

  it("answers the contract's errors: foreign campaign, other campaign's template, unknown category, empty change, bad input", async () => {
    const { apiKey } = await provisionAccount();
    const other = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const sibling = await createCampaign(apiKey);
    const foreign = await createCampaign(other.apiKey);
    const theirCategory = ((await post("/leads/categories", other.apiKey, { name: "Theirs" })).body.data as { id: number }).id;
    expect(await get(`/campaigns/${foreign}/prompt-template`, apiKey)).toMatchObject({ status: 404, body: { error: "Campaign not found" } });
    expect(await post(`/campaigns/${campaign}/prompt-template`, apiKey, { prompt_content: "x", categories: [1, theirCategory] })).toMatchObject({
      status: 400,
      body: { error: `Invalid category - ${theirCategory}` },
    });
    const id = ((await post(`/campaigns/${sibling}/prompt-template`, apiKey, { prompt_content: "x", categories: [1] })).body.data as { template: { id: number } }).template.id;
    expect(await post(`/campaigns/${campaign}/prompt-template/${id}`, apiKey, { is_active: true }, "PATCH")).toMatchObject({ status: 404, body: { error: "Prompt template not found" } });
    expect((await post(`/campaigns/${sibling}/prompt-template/${id}`, apiKey, {}, "PATCH")).status).toBe(400);
    for (const body of [{ prompt_content: "", categories: [1] }, { prompt_content: "x".repeat(20_001), categories: [1] }, { prompt_content: "x", categories: [] }, { prompt_content: "x", categories: Array.from({ length: 51 }, () => 1) }, { prompt_content: "x" }]) {
      expect((await post(`/campaigns/${campaign}/prompt-template`, apiKey, body)).status).toBe(422);
    }
  });
});

describe("campaign settings (CONTRACT 20.3)", () => {
  it("stores auto_categorise_reply and ai_categorisation_options and shows both on the campaign", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    expect((await get(`/campaigns/${campaign}`, apiKey)).body).toMatchObject({ auto_categorise_reply: true, ai_categorisation_options: null });
    await post(`/campaigns/${campaign}/settings`, apiKey, { auto_categorise_reply: false, ai_categorisation_options: [{ id: 1, label: "Hot" }, 2] });
    expect((await get(`/campaigns/${campaign}`, apiKey)).body).toMatchObject({ auto_categorise_reply: false, ai_categorisation_options: [{ id: 1, label: "Hot" }, 2] });
    expect((await post(`/campaigns/${campaign}/settings`, apiKey, { auto_categorise_reply: "no" })).status).toBe(422);
  });

  it("limits the categoriser to ai_categorisation_options when no template is active", async () => {
    const { account, campaign, ids } = await sentWorld(["opt@set.example"]);
    await post(`/campaigns/${campaign}/settings`, account.apiKey, { ai_categorisation_options: [{ id: 1 }, "3"] });
    const { body } = await post(`/campaigns/${campaign}/reply-categorisation/test`, account.apiKey, { reply_text: "Please remove me from your list." });
    expect(body.data).toMatchObject({ category_id: null, needs_review: true, rule_id: "dnc.remove-me@1", categories_considered: [{ id: 1, name: "Interested" }, { id: 3, name: "Not Interested" }] });
    void ids;
  });
});

describe("the categorisation test route (CONTRACT 20.6)", () => {
  it("answers what the campaign's categoriser would decide, with what it considered, and stores nothing", async () => {
    const { apiKey } = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const custom = ((await post("/leads/categories", apiKey, { name: "Partner", sentiment_type: "positive" })).body.data as { id: number }).id;
    const rule = await post(`/campaigns/${campaign}/reply-categorisation/test`, apiKey, { reply_text: "I have left the company, please contact my replacement.", subject: "Re: hi" });
    expect(rule.status).toBe(200);
    expect(rule.body).toEqual({
      ok: true,
      data: {
        category_id: 7,
        category_name: "Wrong Person",
        result: "Wrong Person",
        source: "rule",
        confidence: 1,
        needs_review: false,
        reason: expect.stringContaining("wrong_person.left-company@1"),
        rule_id: "wrong_person.left-company@1",
        model: null,
        prompt_version: null,
        categories_considered: [1, 2, 3, 4, 5, 6, 7, custom].map((id) => ({ id, name: expect.any(String) })),
        custom_labels_considered: ["Partner"],
      },
    });
    const model = await post(`/campaigns/${campaign}/reply-categorisation/test`, apiKey, { reply_text: "Sure, can we talk on Thursday?" });
    expect(model.body.data).toMatchObject({ category_id: 2, result: "Meeting Request", source: "model", model: "@cf/meta/llama-3.2-3b-instruct", prompt_version: "default.1", confidence: 0.92 });
    const tried = await post(`/campaigns/${campaign}/reply-categorisation/test`, apiKey, { reply_text: "Hello there", prompt_content: "[[fake:prefer=Partner]]", categories: [custom, 1] });
    expect(tried.body.data).toMatchObject({ category_id: custom, category_name: "Partner", prompt_version: "draft", custom_labels_considered: ["Partner"] });
    expect(await promptTemplatesOf(campaign)).toEqual([]);
    const withoutModel = await callWithEnv({ CATEGORISER: "rules" }, `/api/v1/campaigns/${campaign}/reply-categorisation/test`, { method: "POST", apiKey, body: { reply_text: "Sure, can we talk on Thursday?" } });
    expect(withoutModel.body.data).toMatchObject({ category_id: null, source: "rule", needs_review: false, model: null });
  });

  it("refuses bad input and foreign campaigns, and stops at the day's allowance with 429", async () => {
    const { apiKey } = await provisionAccount();
    const other = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const foreign = await createCampaign(other.apiKey);
    const path = `/api/v1/campaigns/${campaign}/reply-categorisation/test`;
    expect((await post(`/campaigns/${foreign}/reply-categorisation/test`, apiKey, { reply_text: "hi" })).status).toBe(404);
    expect((await post(`/campaigns/${campaign}/reply-categorisation/test`, apiKey, { reply_text: "" })).status).toBe(422);
    expect((await post(`/campaigns/${campaign}/reply-categorisation/test`, apiKey, { reply_text: "x".repeat(20_001) })).status).toBe(422);
    expect((await post(`/campaigns/${campaign}/reply-categorisation/test`, apiKey, { reply_text: "hi", categories: [424242] })).body).toEqual({ error: "Invalid category - 424242" });
    const limited = { CATEGORISER_TEST_PER_DAY: "2" };
    expect((await callWithEnv(limited, path, { method: "POST", apiKey, body: { reply_text: "one" } })).status).toBe(200);
    expect((await callWithEnv(limited, path, { method: "POST", apiKey, body: { reply_text: "two" } })).status).toBe(200);
    const third = await callWithEnv(limited, path, { method: "POST", apiKey, body: { reply_text: "three" } });
    expect(third.status).toBe(429);
    expect(third.body).toEqual({ error: "Rate limit exceeded", retry_after: expect.any(Number) });
  });
});

describe("replays (CONTRACT 20.7)", () => {
  async function replayWorld() {
    const world = await sentWorld(["r1@rp.example", "r2@rp.example", "r3@rp.example", "r4@rp.example"]);
    const { campaign, ids } = world;
    const replies = {
      vague: await storeQuietReply(campaign, ids["r1@rp.example"]!, { body: "Could you tell me more?", occurredAt: "2026-03-02T10:00:00Z" }),
      meeting: await storeQuietReply(campaign, ids["r2@rp.example"]!, { body: "can we talk on Monday?", occurredAt: "2026-03-02T11:00:00Z" }),
      human: await storeQuietReply(campaign, ids["r3@rp.example"]!, { body: "Hmm.", occurredAt: "2026-03-02T12:00:00Z" }),
      dnc: await storeQuietReply(campaign, ids["r4@rp.example"]!, { body: "Please remove me from your list", occurredAt: "2026-03-02T13:00:00Z" }),
    };
    await triageReplies(bindings, [], Object.values(replies));
    await post("/master-inbox/update-category", world.account.apiKey, { email_lead_map_id: ids["r3@rp.example"], category_id: 1 }, "PATCH");
    return { ...world, replies };
  }

  const state = (apiKey: string, campaign: number, job: number) =>
    vi.waitFor(
      async () => {
        const { body } = await get(`/campaigns/${campaign}/reply-categorisation/replay/${job}`, apiKey);
        const data = body.data as Json & { status: string };
        if (data.status !== "completed" && data.status !== "failed") throw new Error(`still ${data.status}`);
        return data;
      },
      { timeout: 10_000, interval: 100 },
    );

  it("dry-runs a new prompt as a diff, keeps people's categories, then applies it to the replies unchanged since", async () => {
    const { account, campaign, ids, replies } = await replayWorld();
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    const started = await post(`/campaigns/${campaign}/reply-categorisation/replay`, account.apiKey, { prompt_content: "[[fake:prefer=Information Request]]" });
    expect(started.status).toBe(202);
    expect(started.body).toEqual({ ok: true, data: { job_id: expect.any(Number), status: "queued" } });
    const job = (started.body.data as { job_id: number }).job_id;
    const done = await state(account.apiKey, campaign, job);
    expect(done).toMatchObject({ job_id: job, dry_run: true, status: "completed", total: 4, processed: 4, changed: 2, unchanged: 1, kept_human: 1, needs_review: 0, applied_at: null });
    expect(done.diff).toEqual([
      {
        stats_id: String(replies.meeting),
        email_lead_map_id: ids["r2@rp.example"],
        lead_email: "r2@rp.example",
        reply_time: "2026-03-02T11:00:00.000Z",
        old: { category_id: 2, source: "model" },
        new: { category_id: 5, source: "model", confidence: 0.9, needs_review: false },
      },
      expect.objectContaining({ stats_id: String(replies.vague), old: { category_id: null, source: "model" }, new: expect.objectContaining({ category_id: 5 }) }),
    ]);
    // A dry run changes nothing.
    expect((await recordOf(ids["r2@rp.example"]!))!.category_id).toBe(2);
    expect((await get(`/campaigns/${campaign}/reply-categorisation/replay/${job}?offset=1&limit=1`, account.apiKey)).body.data).toMatchObject({ diff: [expect.objectContaining({ stats_id: String(replies.vague) })] });

    // A person changes one of them before the apply: that reply is skipped.
    await post("/master-inbox/update-category", account.apiKey, { email_lead_map_id: ids["r1@rp.example"], category_id: 3 }, "PATCH");
    const before = (await deliveriesOfType(hook.id)).length;
    const applied = await post(`/campaigns/${campaign}/reply-categorisation/replay/${job}/apply`, account.apiKey, {});
    expect(applied.body).toEqual({ ok: true, applied: 1, skipped: 1 });
    expect((await recordOf(ids["r2@rp.example"]!))!.category_id).toBe(5);
    expect((await recordOf(ids["r1@rp.example"]!))!.category_id).toBe(3);
    expect((await recordOf(ids["r3@rp.example"]!))!.category_id).toBe(1);
    expect(await categorisationOf(replies.meeting)).toMatchObject({ category_id: 5, source: "model", prompt_version: "draft" });
    const changes = (await deliveriesOfType(hook.id)).slice(before).map((p) => [p.sl_lead_email, p.lead_category.old_id, p.lead_category.new_id]);
    expect(changes).toEqual([["r2@rp.example", 2, 5]]);
    expect((await post(`/campaigns/${campaign}/reply-categorisation/replay/${job}/apply`, account.apiKey, {})).status).toBe(400);
  });

  it("applies a dry run once when two applies come at once: the other answers 400 and nothing is announced twice", async () => {
    const { account, campaign } = await replayWorld();
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    const started = await post(`/campaigns/${campaign}/reply-categorisation/replay`, account.apiKey, { prompt_content: "[[fake:prefer=Information Request]]" });
    const job = (started.body.data as { job_id: number }).job_id;
    expect(await state(account.apiKey, campaign, job)).toMatchObject({ changed: 2 });
    // Both read the job unapplied and make their plans before either commits.
    const outcomes = await Promise.all([applyDryRun(bindings, job), applyDryRun(bindings, job)]);
    expect(outcomes.filter((o) => o !== null)).toEqual([{ applied: 2, pending: 2 }]);
    expect(outcomes.filter((o) => o === null), "the other finds it applied in its own batch").toHaveLength(1);
    expect((await post(`/campaigns/${campaign}/reply-categorisation/replay/${job}/apply`, account.apiKey, {})).body).toMatchObject({ error: "This replay has been applied already" });
    expect(await deliveriesOfType(hook.id)).toHaveLength(2);
  });

  it("applies as it goes when dry_run is false, one job per campaign at a time", async () => {
    const { account, campaign, ids, replies } = await replayWorld();
    await storedReplay(campaign, "running");
    const busy = await post(`/campaigns/${campaign}/reply-categorisation/replay`, account.apiKey, { dry_run: false });
    expect(busy).toMatchObject({ status: 409, body: { ok: false } });
    await replaysFailed(campaign);
    expect((await post(`/campaigns/${campaign}/reply-categorisation/replay`, account.apiKey, { dry_run: false, prompt_content: "x" })).status).toBe(422);
    await uncategorised(replies.meeting);
    const started = await post(`/campaigns/${campaign}/reply-categorisation/replay`, account.apiKey, { dry_run: false, only_uncategorised: true, from: "2026-03-02T10:30:00Z" });
    const done = await state(account.apiKey, campaign, (started.body.data as { job_id: number }).job_id);
    expect(done).toMatchObject({ dry_run: false, status: "completed", total: 1, processed: 1, changed: 1, applied_at: expect.any(String) });
    expect(await categorisationOf(replies.meeting)).toMatchObject({ category_id: 2, source: "model" });
    expect((await recordOf(ids["r2@rp.example"]!))!.category_id).toBe(2);
    expect((await post(`/campaigns/${campaign}/reply-categorisation/replay/${(started.body.data as { job_id: number }).job_id}/apply`, account.apiKey, {})).status).toBe(400);
  });

  it("unsubscribes a lead everywhere when an applied replay puts it in Do Not Contact", async () => {
    const { account, campaign, ids } = await sentWorld(["quits@rp.example"]);
    const reply = await storeQuietReply(campaign, ids["quits@rp.example"]!, { body: "Hmm, not sure about all this." });
    await triageReplies(bindings, [], [reply]);
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_UNSUBSCRIBED", "LEAD_CATEGORY_UPDATED"] });
    const started = await post(`/campaigns/${campaign}/reply-categorisation/replay`, account.apiKey, { prompt_content: "[[fake:prefer=Do Not Contact]]" });
    const job = (started.body.data as { job_id: number }).job_id;
    expect(await state(account.apiKey, campaign, job)).toMatchObject({ changed: 1 });
    expect((await recordOf(ids["quits@rp.example"]!))!.state).toBe("COMPLETED");
    expect((await post(`/campaigns/${campaign}/reply-categorisation/replay/${job}/apply`, account.apiKey, {})).body).toEqual({ ok: true, applied: 1, skipped: 0 });
    expect((await recordOf(ids["quits@rp.example"]!))!).toMatchObject({ category_id: 4, state: "STOPPED" });
    expect((await deliveriesOfType(hook.id)).map((p) => p.sl_lead_email)).toEqual(["quits@rp.example", "quits@rp.example"]);
  });

  it("refuses a foreign campaign or job and bad input", async () => {
    const { apiKey } = await provisionAccount();
    const other = await provisionAccount();
    const campaign = await createCampaign(apiKey);
    const foreign = await createCampaign(other.apiKey);
    expect((await post(`/campaigns/${foreign}/reply-categorisation/replay`, apiKey, {})).status).toBe(404);
    expect((await get(`/campaigns/${campaign}/reply-categorisation/replay/999999`, apiKey)).status).toBe(404);
    for (const body of [{ limit: 0 }, { limit: 5001 }, { from: "yesterday" }, { dry_run: "yes" }]) {
      expect((await post(`/campaigns/${campaign}/reply-categorisation/replay`, apiKey, body)).status, JSON.stringify(body)).toBe(422);
    }
    expect((await post(`/campaigns/${campaign}/reply-categorisation/replay`, apiKey, { from: "2026-03-05T00:00:00Z", to: "2026-03-01T00:00:00Z" })).status).toBe(400);
  });
});

async function deliveriesOfType(webhookId: number) {
  const rows = await webhookDeliveries(webhookId);
  return rows.map((row) => row.payload as { sl_lead_email: string; lead_category: { old_id: number | null; new_id: number | null } });
}
