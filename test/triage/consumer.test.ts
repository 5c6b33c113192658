import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { createCampaign, addLeads, analytics, ingestOk } from "../campaigns/fixtures";
import { eventsOf, leadRow, personOf, recordEventCount, recordRow, setEvent, setRecord } from "../db";
import { callJson, fileEnv } from "../helpers";
import { createWebhook, deliveriesOf, interceptReceiver, RECEIVER } from "../webhooks/fixtures";
import { commitOutcomes, triageReplies } from "../../src/triage/consumer";
import { campaignContext, namedReplies } from "../../src/triage/store";
import { database } from "../../src/platform/db";
import { mailboxWakeReads, recordingQueries } from "../d1-queries";
import { sweepUntriaged } from "../../src/triage/queue";
import {
  bindings,
  categorisationOf,
  eventually,
  openAi,
  recordOf,
  replyIds,
  rulesOnly,
  sentWorld,
  setSettings,
  storeQuietReply,
} from "./fixtures";

let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

const reply = (email: string, body: string, at = "2026-03-02T10:00:00Z", extra: Record<string, unknown> = {}) => ({
  event_id: `reply-${email}-${at}`,
  type: "REPLY",
  lead_email: email,
  from_email: email,
  occurred_at: at,
  subject: "Re: Quick question",
  body,
  ...extra,
});

describe("replies are categorised off the request path, within seconds", () => {
  it("puts a remove-me reply in Do Not Contact by rule, stops the lead in every campaign and fires both webhooks", async () => {
    const { account, campaign, ids } = await sentWorld(["gone@dnc.example", "stays@dnc.example"]);
    const other = await createCampaign(account.apiKey, { name: "Other" });
    const otherIds = await addLeads(account.apiKey, other, ["gone@dnc.example"]);
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED", "LEAD_UNSUBSCRIBED"] });
    const otherHook = await createWebhook(account.apiKey, other, { event_types: ["LEAD_UNSUBSCRIBED"] });

    await ingestOk(account.apiKey, campaign, [reply("gone@dnc.example", "Not interested. Please remove me from your mailing list.")]);
    // Listed at once, before categorisation.
    const [stored] = await replyIds(campaign);
    const categorised = await eventually(stored!.id);
    expect(categorised).toMatchObject({ category_id: 4, category_name: "Do Not Contact", source: "rule", rule_id: "dnc.remove-me@1", confidence: 1, needs_review: false });

    const record = await recordOf(ids["gone@dnc.example"]!);
    expect(record).toMatchObject({ category_id: 4, state: "STOPPED" });
    expect((await recordOf(otherIds["gone@dnc.example"]!))!.state).toBe("STOPPED");
    expect((await recordOf(ids["stays@dnc.example"]!))!.state).toBe("INPROGRESS");
    expect((await leadRow(record!.lead_id)).isUnsubscribed).toBe(true);

    const mine = await deliveriesOf(hook.id);
    expect(mine.map((d) => d.event_type).sort()).toEqual(["LEAD_CATEGORY_UPDATED", "LEAD_UNSUBSCRIBED"]);
    const change = JSON.parse(mine.find((d) => d.event_type === "LEAD_CATEGORY_UPDATED")!.payload);
    expect(change).toMatchObject({
      event_type: "LEAD_CATEGORY_UPDATED",
      lead_category: { old_id: null, old_name: null, new_id: 4, new_name: "Do Not Contact" },
      lead_category_id: 4,
      category: "Do Not Contact",
      category_source: "rule",
      confidence: 1,
      prompt_version: null,
      stats_id: String(stored!.id),
      lead_data: expect.objectContaining({ email: "gone@dnc.example", category: { name: "Do Not Contact", sentiment_type: "negative" } }),
    });
    const last = change.history.at(-1);
    expect(last).toMatchObject({ type: "REPLY", categorisation: expect.objectContaining({ category_id: 4, source: "rule", needs_review: false }) });
    const unsubscribed = JSON.parse(mine.find((d) => d.event_type === "LEAD_UNSUBSCRIBED")!.payload);
    expect(unsubscribed).toMatchObject({ source: "reply", lead_email: "gone@dnc.example" });
    expect((await deliveriesOf(otherHook.id)).map((d) => JSON.parse(d.payload).source)).toEqual(["reply"]);

    // A redelivered message writes nothing twice.
    await triageReplies(bindings, [{ campaignId: campaign, eventId: stored!.event_id }], []);
    expect(await deliveriesOf(hook.id)).toHaveLength(2);
    expect(await recordEventCount(ids["gone@dnc.example"]!, "UNSUBSCRIBE")).toBe(1);
  });

  it("puts a left-the-company reply in Wrong Person, and a meeting proposal where the model says (Workers AI binding)", async () => {
    const { account, campaign, ids } = await sentWorld(["left@wp.example", "keen@wp.example"]);
    await ingestOk(account.apiKey, campaign, [
      reply("left@wp.example", "I've left the company, try Dana at dana@wp.example"),
      reply("keen@wp.example", "sounds good, can we talk Tuesday?"),
    ]);
    const [left, keen] = await replyIds(campaign);
    expect(await eventually(left!.id)).toMatchObject({ category_id: 7, source: "rule", rule_id: "wrong_person.left-company@1" });
    const meeting = await eventually(keen!.id);
    expect(meeting).toMatchObject({
      category_id: 2,
      category_name: "Meeting Request",
      source: "model",
      model: "@cf/meta/llama-3.2-3b-instruct",
      prompt_template_id: null,
      prompt_version: "default.1",
      confidence: 0.92,
      needs_review: false,
    });
    expect(meeting.reason).toContain("can we talk");
    expect((await recordOf(ids["keen@wp.example"]!))!.category_id).toBe(2);
    expect((await recordOf(ids["left@wp.example"]!))!.category_id).toBe(7);
  });

  it("sends a reply the model is unsure of to the needs-review lane, uncategorised, and the inbox shows and filters it", async () => {
    const { account, campaign, ids } = await sentWorld(["maybe@nr.example", "sure@nr.example"]);
    await ingestOk(account.apiKey, campaign, [reply("maybe@nr.example", "Hmm, what is this about exactly?"), reply("sure@nr.example", "can we talk next week?")]);
    const [maybe, sure] = await replyIds(campaign);
    expect(await eventually(maybe!.id)).toMatchObject({ category_id: null, source: "model", needs_review: true });
    await eventually(sure!.id);
    expect((await recordOf(ids["maybe@nr.example"]!))!.category_id).toBeNull();

    const page = (filters: Record<string, unknown>) =>
      callJson<{ messages: { email_lead_map_id: number; needs_review: boolean; category_source: string | null; email_history?: { type: string; categorisation?: unknown }[] }[] }>(
        "/api/v1/master-inbox/inbox-replies?fetch_message_history=true",
        { method: "POST", apiKey: account.apiKey, body: { filters: { campaignId: campaign, ...filters } } },
      );
    const all = (await page({})).body.messages;
    expect(all.find((m) => m.email_lead_map_id === ids["maybe@nr.example"])).toMatchObject({ needs_review: true, category_source: "model" });
    expect(all.find((m) => m.email_lead_map_id === ids["sure@nr.example"])).toMatchObject({ needs_review: false, category_source: "model" });
    const history = all.find((m) => m.email_lead_map_id === ids["sure@nr.example"])!.email_history!;
    expect(history.find((m) => m.type === "SENT")).not.toHaveProperty("categorisation");
    expect(history.find((m) => m.type === "REPLY")!.categorisation).toEqual({
      category_id: 2,
      category_name: "Meeting Request",
      source: "model",
      rule_id: null,
      model: "@cf/meta/llama-3.2-3b-instruct",
      prompt_template_id: null,
      prompt_version: "default.1",
      confidence: 0.92,
      needs_review: false,
      reason: expect.stringContaining("Meeting Request"),
      categorised_at: expect.stringMatching(/Z$/),
    });
    expect((await page({ needsReview: true })).body.messages.map((m) => m.email_lead_map_id)).toEqual([ids["maybe@nr.example"]]);
    expect((await page({ needsReview: false })).body.messages.map((m) => m.email_lead_map_id)).toEqual([ids["sure@nr.example"]]);

    const thread = await callJson<{ history: { type: string; categorisation?: { needs_review: boolean } }[] }>(
      `/api/v1/campaigns/${campaign}/leads/${(await recordOf(ids["maybe@nr.example"]!))!.lead_id}/message-history`,
      { apiKey: account.apiKey },
    );
    expect(thread.body.history.find((m) => m.type === "REPLY")!.categorisation).toMatchObject({ needs_review: true, source: "model" });
  });

  it("never guesses without a model: only the rules' categories appear", async () => {
    const { campaign, ids } = await sentWorld(["a@rules.example", "b@rules.example"]);
    const meeting = await storeQuietReply(campaign, ids["a@rules.example"]!, { body: "sounds good, can we talk Tuesday?" });
    const dnc = await storeQuietReply(campaign, ids["b@rules.example"]!, { body: "Unsubscribe" });
    await triageReplies(rulesOnly(), [], [meeting, dnc]);
    expect(await categorisationOf(meeting)).toMatchObject({ category_id: null, source: "rule", model: null, needs_review: false, reason: expect.stringContaining("no model") });
    expect(await categorisationOf(dnc)).toMatchObject({ category_id: 4, source: "rule", rule_id: "dnc.bare-opt-out@1" });
    expect((await recordOf(ids["a@rules.example"]!))!.category_id).toBeNull();
  });

  it("asks an OpenAI-compatible endpoint when configured so, with the campaign's prompt and categories", async () => {
    const { account, campaign, ids } = await sentWorld(["o@oa.example"]);
    const created = await callJson<{ data: { template: { id: number } } }>(`/api/v1/campaigns/${campaign}/prompt-template`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { prompt_content: "Sort these for the Acme team. [[fake:prefer=Information Request]]", categories: [1, 2, 5] },
    });
    const template = created.body.data.template.id;
    const id = await storeQuietReply(campaign, ids["o@oa.example"]!, { body: "Tell me how this would work for us." });
    await triageReplies(openAi(), [], [id]);
    expect(await categorisationOf(id)).toMatchObject({ category_id: 5, source: "model", model: "gpt-test-mini", prompt_template_id: template, prompt_version: `${template}.1` });
    const sent = (await (await fetch(`${openAi().CATEGORISER_OPENAI_BASE_URL!.replace(/\/v1$/, "")}/requests`)).json()) as { authorization: string; body: { messages: { content: string }[] } }[];
    const last = sent.at(-1)!;
    expect(last.authorization).toBe("Bearer sk-test-fake-openai-key");
    expect(last.body.messages[0]!.content).toContain("Sort these for the Acme team.");
    const input = JSON.parse(last.body.messages[1]!.content);
    expect(input.categories.map((c: { id: number }) => c.id)).toEqual([1, 2, 5]);
    expect(input.email_we_sent).toEqual({ subject: "Quick question", text: "<p>Hi, a quick question about your outbound.</p>" });
    expect(input.reply.text).toBe("Tell me how this would work for us.");
  });
});

describe("people and events keep their categories", () => {
  it("never replaces a person's category with an automatic one for the same reply; a later reply may recategorise", async () => {
    const { account, campaign, ids } = await sentWorld(["h@human.example"]);
    const record = ids["h@human.example"]!;
    const first = await storeQuietReply(campaign, record, { body: "Please remove me from your list.", occurredAt: "2026-03-02T10:00:00Z" });
    expect((await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: account.apiKey, body: { email_lead_map_id: record, category_id: 1 } })).status).toBe(200);
    await triageReplies(bindings, [], [first]);
    expect(await categorisationOf(first)).toMatchObject({ source: "human", category_id: 1 });
    expect((await recordOf(record))!).toMatchObject({ category_id: 1, state: "COMPLETED" });
    expect((await leadRow((await recordOf(record))!.lead_id)).isUnsubscribed).toBe(false);

    const later = await storeQuietReply(campaign, record, { body: "Actually, no budget this year.", occurredAt: new Date(Date.now() + 60_000).toISOString() });
    await triageReplies(bindings, [], [later]);
    expect(await categorisationOf(later)).toMatchObject({ source: "model", category_id: 3 });
    expect((await recordOf(record))!.category_id).toBe(3);
  });

  it("leaves a person's later choice alone when an older reply is categorised after it (and unsubscribes nobody)", async () => {
    const { account, campaign, ids } = await sentWorld(["late@order.example"]);
    const record = ids["late@order.example"]!;
    const older = await storeQuietReply(campaign, record, { body: "Please remove me from your list.", occurredAt: "2026-03-02T10:00:00Z" });
    const newer = await storeQuietReply(campaign, record, { body: "Sorry, ignore that: send me the pricing sheet.", occurredAt: "2026-03-02T11:00:00Z" });
    expect((await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: account.apiKey, body: { email_lead_map_id: record, category_id: 5 } })).status).toBe(200);
    await triageReplies(bindings, [], [older]);
    expect(await categorisationOf(older)).toMatchObject({ source: "rule", category_id: 4 });
    expect(await categorisationOf(newer)).toMatchObject({ source: "human", category_id: 5 });
    expect((await recordOf(record))!).toMatchObject({ category_id: 5 });
    expect((await leadRow((await recordOf(record))!.lead_id)).isUnsubscribed).toBe(false);
  });

  it("holds a record to a person's change made between the consumer's read and its write (the SQL guard)", async () => {
    const { account, campaign, ids } = await sentWorld(["stale@guard.example"]);
    const record = ids["stale@guard.example"]!;
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    const id = await storeQuietReply(campaign, record, { body: "I am no longer with the company.", occurredAt: "2026-03-02T10:00:00Z" });
    // A later reply takes the person's categorisation, so only the record's time guards the older one.
    await storeQuietReply(campaign, record, { body: "Hmm.", occurredAt: "2026-03-02T11:00:00Z" });
    const [stale] = await namedReplies(fileEnv().DB, fileEnv().BODIES, [], [id]);
    const context = (await campaignContext(database(fileEnv().DB), campaign))!;
    expect((await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: account.apiKey, body: { email_lead_map_id: record, category_id: 1 } })).status).toBe(200);
    const before = (await deliveriesOf(hook.id)).length;
    // The outcome as a consumer that read before the person's change would write it.
    await commitOutcomes(bindings, database(fileEnv().DB), [{ reply: stale!, context, markOoo: false, stored: { categoryId: 7, categoryName: "Wrong Person", source: "rule", ruleId: "wrong_person.left-company@1", model: null, promptTemplateId: null, promptVersion: null, confidence: 1, needsReview: false, reason: "test" } }], Date.now());
    expect(await categorisationOf(id)).toMatchObject({ category_id: 7, source: "rule" });
    expect((await recordOf(record))!.category_id).toBe(1);
    expect(await deliveriesOf(hook.id)).toHaveLength(before);
  });

  it("unsubscribes nobody for a Do Not Contact decided before a person's category (its opt-out holds to the batch making the record Do Not Contact)", async () => {
    const { account, campaign, ids } = await sentWorld(["race@dnc.example", "older@dnc.example"]);
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_UNSUBSCRIBED", "LEAD_CATEGORY_UPDATED"] });
    const context = (await campaignContext(database(fileEnv().DB), campaign))!;
    const dnc = { categoryId: 4, categoryName: "Do Not Contact", ruleId: "dnc.remove-me@1", model: null, promptTemplateId: null, promptVersion: null, confidence: 1, needsReview: false, reason: "test" };
    // The person categorises the record while the consumer decides: the same reply, or (a later reply
    // stored meanwhile) the record only, where the consumer's categorisation of its reply still stands.
    const cases = [
      { email: "race@dnc.example", later: false, source: "human" },
      { email: "older@dnc.example", later: true, source: "rule" },
    ];
    for (const { email, later, source } of cases) {
      const record = ids[email]!;
      const id = await storeQuietReply(campaign, record, { body: "Please remove me from your mailing list.", occurredAt: "2026-03-02T10:00:00Z" });
      const [stale] = await namedReplies(fileEnv().DB, fileEnv().BODIES, [], [id]);
      if (later) await storeQuietReply(campaign, record, { body: "Hmm.", occurredAt: "2026-03-02T11:00:00Z" });
      expect((await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: account.apiKey, body: { email_lead_map_id: record, category_id: 1 } })).status).toBe(200);
      const before = (await deliveriesOf(hook.id)).length;
      await commitOutcomes(bindings, database(fileEnv().DB), [{ reply: stale!, context, markOoo: false, stored: { ...dnc, source: "rule" } }], Date.now());
      expect(await categorisationOf(id), email).toMatchObject({ source, category_id: source === "human" ? 1 : 4 });
      const after = (await recordOf(record))!;
      expect({
        category: after.category_id,
        state: after.state,
        leadUnsubscribed: (await leadRow(after.lead_id)).isUnsubscribed,
        unsubscribeEvents: await recordEventCount(record, "UNSUBSCRIBE"),
        newDeliveries: (await deliveriesOf(hook.id)).slice(before).map((d) => d.event_type),
      }, email).toEqual({ category: 1, state: "COMPLETED", leadUnsubscribed: false, unsubscribeEvents: 0, newDeliveries: [] });
    }
  });

  it("takes a person's choice of the category the record already holds as the latest reply's: it leaves the needs-review lane, with no webhook", async () => {
    const { account, campaign, ids } = await sentWorld(["confirm@nr.example"]);
    const record = ids["confirm@nr.example"]!;
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"] });
    const older = await storeQuietReply(campaign, record, { body: "I've left the company, try Dana at dana@nr.example", occurredAt: "2026-03-02T10:00:00Z" });
    const newer = await storeQuietReply(campaign, record, { body: "This is an automated message. Please do not reply to this email.", occurredAt: "2026-03-02T11:00:00Z" });
    await triageReplies(bindings, [], [older, newer]);
    expect(await categorisationOf(older)).toMatchObject({ category_id: 7, source: "rule" });
    expect(await categorisationOf(newer)).toMatchObject({ category_id: null, needs_review: true });
    const held = (await recordOf(record))!;
    expect(held.category_id).toBe(7);
    const before = (await deliveriesOf(hook.id)).length;
    expect((await callJson("/api/v1/master-inbox/update-category", { method: "PATCH", apiKey: account.apiKey, body: { email_lead_map_id: record, category_id: 7 } })).status).toBe(200);
    expect(await categorisationOf(newer)).toMatchObject({ category_id: 7, source: "human", needs_review: false });
    expect((await recordOf(record))!.category_set_at, "the record's category stays as set").toEqual(held.category_set_at);
    expect(await deliveriesOf(hook.id)).toHaveLength(before);
  });

  it("keeps an event's own category as its source, and does nothing when the campaign turns categorisation off", async () => {
    const { account, campaign, ids } = await sentWorld(["e@ev.example", "off@ev.example"]);
    const given = await storeQuietReply(campaign, ids["e@ev.example"]!, { body: "Please remove me", categoryId: 1 });
    await triageReplies(bindings, [], [given]);
    expect(await categorisationOf(given)).toMatchObject({ source: "event", category_id: 1, category_name: "Interested" });
    expect((await recordOf(ids["e@ev.example"]!))!.category_id).toBe(1);

    await setSettings(account.apiKey, campaign, { auto_categorise_reply: false });
    const off = await storeQuietReply(campaign, ids["off@ev.example"]!, { body: "Please remove me from your list" });
    await triageReplies(bindings, [], [off]);
    expect(await categorisationOf(off)).toMatchObject({ source: "off", category_id: null });
    expect((await recordOf(ids["off@ev.example"]!))!.category_id).toBeNull();
    const thread = await callJson<{ history: { type: string; categorisation: unknown }[] }>(
      `/api/v1/campaigns/${campaign}/leads/${(await recordOf(ids["off@ev.example"]!))!.lead_id}/message-history`,
      { apiKey: account.apiKey },
    );
    expect(thread.body.history.find((m) => m.type === "REPLY")!.categorisation).toBeNull();
  });

  it("still recognises an out-of-office answer with categorisation off: category 6 under autoCategorizeOOO, and flagged for section 11", async () => {
    const { account, campaign, ids } = await sentWorld(["away@ooo.example", "quiet@ooo.example"]);
    await setSettings(account.apiKey, campaign, { auto_categorise_reply: false, out_of_office_detection_settings: { autoCategorizeOOO: true } });
    const away = await storeQuietReply(campaign, ids["away@ooo.example"]!, { body: "I am out of the office until Monday with limited access to email.", subject: "Automatic reply: Quick question" });
    await triageReplies(bindings, [], [away]);
    expect(await categorisationOf(away)).toMatchObject({ category_id: 6, source: "rule" });
    expect((await eventsOf(campaign)).find((e) => e.id === away)).toMatchObject({ isOoo: true, categoryId: 6 });

    await setSettings(account.apiKey, campaign, { auto_categorise_reply: false, out_of_office_detection_settings: { autoCategorizeOOO: false } });
    const quiet = await storeQuietReply(campaign, ids["quiet@ooo.example"]!, { body: "I am out of the office until Monday with limited access to email.", subject: "Automatic reply: Quick question" });
    await triageReplies(bindings, [], [quiet]);
    expect(await categorisationOf(quiet)).toMatchObject({ category_id: null, source: "rule" });
    expect((await eventsOf(campaign)).find((e) => e.id === quiet)).toMatchObject({ isOoo: true, categoryId: null });
  });
});

describe("webhooks and analytics follow the automatic category", () => {
  it("filters LEAD_CATEGORY_UPDATED by category_id_map exactly as for a change by hand", async () => {
    const { account, campaign, ids } = await sentWorld(["p@f.example", "q@f.example"]);
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED"], categories: [7] });
    const a = await storeQuietReply(campaign, ids["p@f.example"]!, { body: "Please remove me from your list" });
    const b = await storeQuietReply(campaign, ids["q@f.example"]!, { body: "I am no longer with the company." });
    await triageReplies(bindings, [], [a, b]);
    const delivered = (await deliveriesOf(hook.id)).map((d) => JSON.parse(d.payload));
    expect(delivered.map((p) => [p.sl_lead_email, p.lead_category.new_id])).toEqual([["q@f.example", 7]]);
  });

  it("keeps analytics-by-date's reply counts to rules 2-6 as categories arrive", async () => {
    const { account, campaign, ids } = await sentWorld(["ooo@an.example", "back@an.example", "plain@an.example"]);
    await setSettings(account.apiKey, campaign, { out_of_office_detection_settings: { autoCategorizeOOO: true } });
    await ingestOk(account.apiKey, campaign, [
      reply("ooo@an.example", "I am out of the office until Monday with limited access to email.", "2026-03-02T10:00:00Z", { subject: "Automatic reply: Quick question" }),
      reply("back@an.example", "I am out of the office until Friday.", "2026-03-02T10:00:00Z", { subject: "Out of Office: Quick question", event_id: "back-1" }),
      reply("back@an.example", "Back now: can we talk on Monday?", "2026-03-03T10:00:00Z", { event_id: "back-2" }),
      reply("plain@an.example", "Who are you?", "2026-03-02T11:00:00Z"),
    ]);
    const replies = await replyIds(campaign);
    await Promise.all(replies.map((r) => eventually(r.id)));
    expect((await recordOf(ids["ooo@an.example"]!))!.category_id).toBe(6);
    // Rule 6: the latest categorised reply decides, so the lead who came back counts as not out of office for both replies.
    expect((await recordOf(ids["back@an.example"]!))!.category_id).toBe(2);
    const { body } = await analytics(account.apiKey, campaign, { start_date: "2026-03-01", end_date: "2026-03-05" });
    expect(body).toMatchObject({ total_reply_count: "4", reply_count: "4", non_ooo_reply_count: "3" });
  });

  it("treats an out-of-office answer only the rules recognise as one flagged on arrival: reopened when ignored, paused until its return date (20.3, section 11)", async () => {
    const away = "I am out of the office until 16 March 2026 with limited access to email.";
    // A lead the engine sent step 1 of two (step 2 three days later): the pushed reply, without is_ooo, ended its sequence on arrival.
    const world = async (settings: Record<string, unknown>) => {
      const { account, campaign, ids } = await sentWorld(["away@late.example"]);
      const steps = [
        { seq_number: 1, subject: "Quick question", email_body: "<p>Hi</p>", seq_delay_details: { delay_in_days: 0 } },
        { seq_number: 2, subject: "Following up", email_body: "<p>Again</p>", seq_delay_details: { delay_in_days: 3 } },
      ];
      expect((await callJson(`/api/v1/campaigns/${campaign}/sequences`, { method: "POST", apiKey: account.apiKey, body: { sequences: steps } })).status).toBe(200);
      const record = ids["away@late.example"]!;
      await setRecord(record, { nextStep: 2 });
      await setSettings(account.apiKey, campaign, { out_of_office_detection_settings: settings });
      const reply = await storeQuietReply(campaign, record, { subject: "Automatic reply: Quick question", body: away });
      expect((await recordOf(record))!.state).toBe("COMPLETED");
      await triageReplies(rulesOnly(), [], [reply]);
      const row = await recordRow(record);
      const event = (await eventsOf(campaign)).find((e) => e.id === reply)!;
      return { row: { state: row.state, due_at: row.dueAt?.getTime() ?? null, resume_at: row.resumeAt?.getTime() ?? null }, event: { is_ooo: event.isOoo, ignored: event.ignored } };
    };
    const stepTwoDue = Date.parse("2026-03-04T09:00:00Z");

    const ignored = await world({ ignoreOOOasReply: true });
    expect(ignored.event).toEqual({ is_ooo: true, ignored: true });
    expect(ignored.row).toEqual({ state: "INPROGRESS", due_at: stepTwoDue, resume_at: null });

    const paused = await world({ autoReactivateOOO: true });
    expect(paused.event).toEqual({ is_ooo: true, ignored: false });
    expect(paused.row).toEqual({ state: "PAUSED", due_at: stepTwoDue, resume_at: Date.parse("2026-03-16T00:00:00Z") });

    // Neither setting: an out-of-office reply ends the sequence like any reply.
    const counted = await world({});
    expect(counted.row).toMatchObject({ state: "COMPLETED", due_at: null });
  });

  it("wakes the senders of every campaign whose out-of-office replies it reopened with one read, however many campaigns", async () => {
    const away = "I am out of the office until 16 March 2026 with limited access to email.";
    const reopenable = async (email: string) => {
      const { account, campaign, ids } = await sentWorld([email]);
      const steps = [
        { seq_number: 1, subject: "Quick question", email_body: "<p>Hi</p>", seq_delay_details: { delay_in_days: 0 } },
        { seq_number: 2, subject: "Following up", email_body: "<p>Again</p>", seq_delay_details: { delay_in_days: 3 } },
      ];
      expect((await callJson(`/api/v1/campaigns/${campaign}/sequences`, { method: "POST", apiKey: account.apiKey, body: { sequences: steps } })).status).toBe(200);
      await setRecord(ids[email]!, { nextStep: 2 });
      await setSettings(account.apiKey, campaign, { out_of_office_detection_settings: { ignoreOOOasReply: true } });
      return { record: ids[email]!, reply: await storeQuietReply(campaign, ids[email]!, { subject: "Automatic reply: Quick question", body: away }) };
    };
    const worlds = [await reopenable("one@wake.example"), await reopenable("two@wake.example"), await reopenable("three@wake.example")];
    const { database: counted, queries } = recordingQueries(fileEnv().DB);
    expect(await triageReplies({ ...rulesOnly(), DB: counted }, [], worlds.map((world) => world.reply))).toBe(3);
    for (const { record } of worlds) expect((await recordRow(record)).state).toBe("INPROGRESS");
    expect(mailboxWakeReads(queries), "one read for three campaigns' mailboxes").toBe(1);
  });

  it("writes everything once when two consumers categorise the same reply at the same time", async () => {
    const { account, campaign, ids } = await sentWorld(["twice@race.example"]);
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_CATEGORY_UPDATED", "LEAD_UNSUBSCRIBED"] });
    const id = await storeQuietReply(campaign, ids["twice@race.example"]!, { body: "Please remove me from your list" });
    await Promise.all([triageReplies(bindings, [], [id]), triageReplies(bindings, [], [id]), triageReplies(bindings, [], [id])]);
    expect((await deliveriesOf(hook.id)).map((d) => d.event_type).sort()).toEqual(["LEAD_CATEGORY_UPDATED", "LEAD_UNSUBSCRIBED"]);
    expect(await recordEventCount(ids["twice@race.example"]!, "UNSUBSCRIBE")).toBe(1);
  });

  it("finds replies whose queue message was lost, on the minute cron", async () => {
    const { campaign, ids } = await sentWorld(["lost@sweep.example"]);
    const id = await storeQuietReply(campaign, ids["lost@sweep.example"]!, { body: "Please remove me from your list" });
    const stored = (await eventsOf(campaign)).find((e) => e.id === id)!;
    await setEvent(id, { createdAt: new Date(stored.createdAt.getTime() - 300_000) });
    expect(await sweepUntriaged(bindings, new Date())).toBeGreaterThanOrEqual(1);
    expect(await eventually(id)).toMatchObject({ category_id: 4 });
    vi.useRealTimers();
  });
});

/** A webhook's deliveries as its receiver would see them, without what differs from one run to the next (ids, times). */
async function receivedBy(webhookId: number): Promise<Record<string, unknown>[]> {
  return (await deliveriesOf(webhookId)).map(({ event_type, payload }) => {
    const { event_timestamp, stats_id, time_unsubscribed, ...stable } = JSON.parse(payload) as Record<string, unknown>;
    return { event_type, timed: [event_timestamp, time_unsubscribed].every((t) => typeof t === "string"), stats_id: typeof stats_id, ...stable };
  });
}

describe("the Do Not Contact opt-out, at scale", () => {
  it("sends D1 the same number of statements for a lead in one campaign as in five, with each campaign's records and webhooks as before", async () => {
    const [one, many] = ["one@scale.example", "many@scale.example"];
    const { account, campaign, ids } = await sentWorld([one, many]);
    const campaigns = [campaign];
    for (let i = 0; i < 4; i++) campaigns.push(await createCampaign(account.apiKey));
    const records = [ids, ...(await Promise.all(campaigns.slice(1).map((other) => addLeads(account.apiKey, other, [many]))))];
    // A record whose sequence is over keeps its state: only live records, and the replying one, are unsubscribed.
    await setRecord(records[4]![many]!, { state: "COMPLETED" });
    const hooks = [] as number[];
    for (const id of campaigns) hooks.push((await createWebhook(account.apiKey, id, { event_types: ["LEAD_UNSUBSCRIBED"] })).id);
    const deaf = (await createWebhook(account.apiKey, campaigns[1]!, { event_types: ["EMAIL_SENT"] })).id;
    const everywhere = await callJson<{ id: number }>("/api/v1/webhooks", { method: "POST", apiKey: account.apiKey, body: { name: "All", url: RECEIVER, events: ["LEAD_UNSUBSCRIBED"] } });
    expect(everywhere.status).toBe(200);
    const context = (await campaignContext(database(fileEnv().DB), campaign))!;
    const dnc = { categoryId: 4, categoryName: "Do Not Contact", source: "rule" as const, ruleId: "dnc.remove-me@1", model: null, promptTemplateId: null, promptVersion: null, confidence: 1, needsReview: false, reason: "test" };
    const optOut = async (email: string) => {
      const reply = await storeQuietReply(campaign, ids[email]!, { body: "Please remove me from your mailing list." });
      const [read] = await namedReplies(fileEnv().DB, fileEnv().BODIES, [], [reply]);
      const { database: counted, queries } = recordingQueries(fileEnv().DB);
      await commitOutcomes({ ...bindings, DB: counted }, database(counted), [{ reply: read!, context, markOoo: false, stored: dnc }], Date.now());
      return { reply, statements: queries.length };
    };

    const single = await optOut(one);
    const fivefold = await optOut(many);

    const replyOf = { [one]: single.reply, [many]: fivefold.reply };
    const unsubscribedIn = (i: number, email: string) => records[i]![email] !== undefined && (i !== 4 || email !== many);
    for (const [i, byEmail] of records.entries()) {
      for (const [email, record] of Object.entries(byEmail)) {
        const row = await recordRow(record);
        expect(row, `campaign ${i}, ${email}`).toMatchObject(unsubscribedIn(i, email) ? { state: "STOPPED", hasUnsubscribed: true, dueAt: null } : { state: "COMPLETED", hasUnsubscribed: false });
        const events = (await eventsOf(campaigns[i]!, "UNSUBSCRIBE")).filter((e) => e.campaignLeadId === record);
        expect(events.map((e) => String(e.eventId)), `campaign ${i}'s events for ${email}`).toEqual(unsubscribedIn(i, email) ? [`salvo-unsubscribe-reply:${replyOf[email]}:${record}`] : []);
      }
    }
    for (const email of [one, many]) expect((await leadRow((await recordOf(ids[email]!))!.lead_id)).isUnsubscribed, email).toBe(true);
    const report = await analytics(account.apiKey, campaign, { start_date: "2026-03-01", end_date: "2026-03-03" });
    expect(report.body.unsubscribed_count).toBe("2");

    // What each webhook received, as the per-campaign ingestions delivered it: one LEAD_UNSUBSCRIBED per unsubscribed record of a campaign it hears.
    const leadOf = { [one]: await personOf(ids[one]!), [many]: await personOf(ids[many]!) };
    const unsubscribed = (webhook: { id: number; name: string }, i: number, email: string) => ({
      event_type: "LEAD_UNSUBSCRIBED", timed: true, stats_id: "string", webhook_id: webhook.id, webhook_name: webhook.name, webhook_url: RECEIVER,
      campaign_id: campaigns[i], campaign_name: i === 0 ? "Triage" : "Untitled Campaign", campaign_status: "DRAFTED", client_id: null,
      sl_email_lead_id: leadOf[email], sl_email_lead_map_id: records[i]![email], sl_lead_email: email, lead_email: email, lead_name: null,
      to_email: null, to_name: null, from_email: null, sequence_number: 1, description: "Lead unsubscribed",
      metadata: { webhook_created_at: expect.any(String) }, unsubscribed_client_id_map: {}, source: "reply",
    });
    const heard = (webhook: { id: number; name: string }, i: number) => [one, many].filter((email) => unsubscribedIn(i, email)).map((email) => unsubscribed(webhook, i, email));
    for (const [i, hook] of hooks.entries()) expect(await receivedBy(hook), `campaign ${i}'s webhook`).toEqual(heard({ id: hook, name: "CRM" }, i));
    const byRecord = (a: Record<string, unknown>, b: Record<string, unknown>) => Number(a.sl_email_lead_map_id) - Number(b.sl_email_lead_map_id);
    expect((await receivedBy(everywhere.body.id)).sort(byRecord), "the account's webhook").toEqual(campaigns.flatMap((_, i) => heard({ id: everywhere.body.id, name: "All" }, i)).sort(byRecord));
    expect(await deliveriesOf(deaf)).toEqual([]);

    expect(single.statements, "counted on the shard the account lives on").toBeGreaterThan(0);
    expect(fivefold.statements, "a lead in five campaigns costs what a lead in one does").toBe(single.statements);
  });
});
