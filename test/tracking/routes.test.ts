import { exports } from "cloudflare:workers";
import { createExecutionContext, createMessageBatch, getQueueResult } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../src/index";
import { hitsOf, type TrackingMessage } from "../../src/tracking/queue-message";
import { openHit } from "./fixtures";
import { loadKeyring } from "../../src/platform/crypto";
import type { Bindings } from "../../src/platform/env";
import { recordTrackedEvents } from "../../src/tracking/store";
import { signToken, type TrackPayload } from "../../src/tracking/tokens";
import { addLeads, analytics, createCampaign, ingestOk } from "../campaigns/fixtures";
import { asc, eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { env } from "cloudflare:workers";
import { call, provisionAccount, fileEnv } from "../helpers";
import { createWebhook, deliveriesOf, interceptReceiver } from "../webhooks/fixtures";

const PERSON = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";
const GIF_HEADER = [0x47, 0x49, 0x46, 0x38, 0x39, 0x61];


async function setUp(leadCount = 1) {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey, { name: "Tracked" });
  const emails = Array.from({ length: leadCount }, (_, i) => `lead${i}-${crypto.randomUUID()}@track.example`);
  const ids = await addLeads(account.apiKey, campaign, emails);
  return { account, campaign, records: emails.map((email) => ids[email]!) };
}

/** Signed exactly as the engine signs the links of an email, with the test env's keyring. */
async function token(payload: Omit<TrackPayload, "sentAt" | "step" | "mailboxId"> & Partial<TrackPayload>): Promise<string> {
  const keyring = await loadKeyring(fileEnv().SECRETS_KEY);
  return signToken(keyring, { step: 1, mailboxId: null, sentAt: Date.now() - 60_000, ...payload });
}

/** A record's events, by id, under the column names the tests read. */
function eventsOf(recordId: number) {
  const t = schema.events;
  return testDb()
    .select({ type: t.type, is_machine: t.isMachine, link_url: t.linkUrl, sequence_number: t.sequenceNumber, email_account_id: t.emailAccountId, event_id: t.eventId })
    .from(t)
    .where(eq(t.campaignLeadId, recordId))
    .orderBy(asc(t.id))
    .all();
}
type EventRow = Awaited<ReturnType<typeof eventsOf>>[number];

function recordOf(recordId: number) {
  const t = schema.campaignLeads;
  return testDb().select({ state: t.state, has_opened: t.hasOpened, has_clicked: t.hasClicked, has_unsubscribed: t.hasUnsubscribed }).from(t).where(eq(t.id, recordId)).get();
}

/** Opens and clicks are recorded after the answer: wait until `count` have landed. */
async function eventuallyEvents(recordId: number, count: number): Promise<EventRow[]> {
  return vi.waitFor(
    async () => {
      const rows = await eventsOf(recordId);
      expect(rows).toHaveLength(count);
      return rows;
    },
    { timeout: 5000, interval: 25 },
  );
}

/** A reader's request; redirects are not followed (the runtime would otherwise fetch the link's target). */
// The queue consumer posts webhook deliveries to the test receiver, never the network.
let receiver: ReturnType<typeof interceptReceiver>;
beforeEach(() => {
  receiver = interceptReceiver();
});
afterEach(() => receiver.restore());

/** Webhook bodies that reached the receiver, once `count` have. */
async function received(count: number): Promise<Record<string, unknown>[]> {
  return vi.waitFor(
    () => {
      expect(receiver.received).toHaveLength(count);
      return receiver.received.map((r) => JSON.parse(r.body) as Record<string, unknown>);
    },
    { timeout: 5000, interval: 25 },
  );
}

const hit = (path: string, method = "GET", userAgent = PERSON) =>
  exports.default.fetch(new Request(new URL(path, "https://salvo.test"), { method, headers: { "User-Agent": userAgent }, redirect: "manual" }));

describe("open pixel", () => {
  it("answers a 43-byte transparent GIF, never cached, and records one OPEN per hit with the machine flag right", async () => {
    const { records } = await setUp();
    const record = records[0]!;
    const pixel = `/t/o/${await token({ kind: "open", recordId: record, step: 2, mailboxId: 9 })}.gif`;

    const first = await hit(pixel);
    expect(first.status).toBe(200);
    expect(first.headers.get("Content-Type")).toBe("image/gif");
    expect(first.headers.get("Cache-Control")).toContain("no-store");
    const bytes = new Uint8Array(await first.arrayBuffer());
    expect(bytes.length).toBe(43);
    expect([...bytes.slice(0, 6)]).toEqual(GIF_HEADER);
    expect(await eventuallyEvents(record, 1)).toEqual([
      // Each hit has an id of its own: a redelivered queue message records nothing twice.
      { type: "OPEN", is_machine: false, link_url: null, sequence_number: 2, email_account_id: 9, event_id: expect.stringMatching(/^salvo-open:/) },
    ]);

    await (await hit(pixel, "GET", "Mozilla/5.0")).arrayBuffer();
    const head = await hit(pixel, "HEAD");
    expect(head.status).toBe(200);
    expect(head.headers.get("Content-Type")).toBe("image/gif");
    const rows = await eventuallyEvents(record, 3);
    expect(rows.map((row) => [row.type, row.is_machine])).toEqual([
      ["OPEN", false],
      ["OPEN", true],
      ["OPEN", true],
    ]);
    expect(await recordOf(record)).toMatchObject({ has_opened: true });
  });

  it("says on a machine's hit's one access log line why it was judged a machine's, and writes no second line", async () => {
    const { records } = await setUp();
    const pixel = `/t/o/${await token({ kind: "open", recordId: records[0]!, mailboxId: 9 })}.gif`;
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    await (await hit(pixel, "GET", "Mozilla/5.0")).arrayBuffer();
    await (await hit(pixel)).arrayBuffer();
    vi.restoreAllMocks();
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>).filter((e) => e.path === "/t/o/:token");
    expect(entries.map((e) => [e.message, e.machine_hit])).toEqual([
      ["request", "apple-mail-privacy-protection"],
      ["request", undefined],
    ]);
    // The queue's consumer may log its batch meanwhile; the hits' own lines are these two.
    expect(lines.filter((line) => !line.includes('"queue"'))).toHaveLength(2);
  });

  it("marks an open within seconds of the send as a machine's", async () => {
    const { records } = await setUp();
    const pixel = `/t/o/${await token({ kind: "open", recordId: records[0]!, sentAt: Date.now() - 2_000 })}.gif`;
    await (await hit(pixel)).arrayBuffer();
    expect((await eventuallyEvents(records[0]!, 1))[0]!.is_machine).toBe(true);
  });

  it("still answers the GIF to a forged, altered or wrong-kind token, and records nothing for it", async () => {
    const { records } = await setUp(2);
    const [victim, witness] = records as [number, number];
    const good = await token({ kind: "open", recordId: victim });
    const forged = [
      `${good.slice(0, -3)}AAA`,
      (await token({ kind: "unsubscribe", recordId: victim })),
      (await signToken(await loadKeyring(`other:${btoa(String.fromCharCode(...new Uint8Array(32).fill(7)))}`), {
        kind: "open",
        recordId: victim,
        step: 1,
        mailboxId: null,
        sentAt: 0,
      })),
      "garbage",
    ];
    for (const bad of forged) {
      const response = await hit(`/t/o/${bad}.gif`);
      expect(response.status).toBe(200);
      expect((await response.arrayBuffer()).byteLength).toBe(43);
    }
    // A real hit after the forged ones: once it has landed, anything the forged ones caused would have too.
    await (await hit(`/t/o/${await token({ kind: "open", recordId: witness })}.gif`)).arrayBuffer();
    await eventuallyEvents(witness, 1);
    expect(await eventsOf(victim)).toEqual([]);
    expect(await recordOf(victim)).toMatchObject({ has_opened: false });
  });
});

describe("click redirect", () => {
  it("redirects to the signed URL and records a CLICK with link_url", async () => {
    const { records } = await setUp();
    const url = "https://acme.example/pricing?plan=pro&ref=mail#top";
    const response = await hit(`/t/c/${await token({ kind: "click", recordId: records[0]!, url })}`);
    expect(response.status).toBe(302);
    expect(response.headers.get("Location")).toBe(url);
    expect(await eventuallyEvents(records[0]!, 1)).toMatchObject([{ type: "CLICK", is_machine: false, link_url: url }]);
    expect(await recordOf(records[0]!)).toMatchObject({ has_clicked: true });
  });

  it("redirects to the URL's encoded form (non-ASCII path, query, fragment and host), never with a line break", async () => {
    const { records } = await setUp();
    const cases = [
      ["https://bücher.example/straße?q=café&x=ü#teil-ü", "https://xn--bcher-kva.example/stra%C3%9Fe?q=caf%C3%A9&x=%C3%BC#teil-%C3%BC"],
      ["https://acme.example/already%20encoded?q=a%2Bb&r=%E2%9C%93", "https://acme.example/already%20encoded?q=a%2Bb&r=%E2%9C%93"],
      // Signed before links with line breaks were refused at save, or filled from a lead's field: what a browser would follow.
      ["https://acme.example/a\r\nSet-Cookie: x=1", "https://acme.example/aSet-Cookie:%20x=1"],
      ["https://acme.example/\u2028p?\u0085", "https://acme.example/%E2%80%A8p?%C2%85"],
    ];
    for (const [url, location] of cases) {
      const response = await hit(`/t/c/${await token({ kind: "click", recordId: records[0]!, url: url! })}`);
      expect(response.status, url).toBe(302);
      expect(response.headers.get("Location"), url).toBe(location);
      expect(response.headers.get("Set-Cookie")).toBeNull();
    }
  });

  it("marks a scanner's click (HEAD, or a named scanner) as a machine's", async () => {
    const { records } = await setUp();
    const path = `/t/c/${await token({ kind: "click", recordId: records[0]!, url: "https://acme.example/" })}`;
    expect((await hit(path, "HEAD")).status).toBe(302);
    expect((await hit(path, "GET", "Mozilla/5.0 (Windows NT; Microsoft Office SafeLinks)")).status).toBe(302);
    expect((await eventuallyEvents(records[0]!, 2)).map((row) => row.is_machine)).toEqual([true, true]);
  });

  it("answers 404 to a forged token or another kind's token, redirecting nowhere and recording nothing", async () => {
    const { records } = await setUp(2);
    const [victim, witness] = records as [number, number];
    const good = await token({ kind: "click", recordId: victim, url: "https://acme.example/" });
    for (const bad of [`${good.slice(0, -3)}AAA`, await token({ kind: "open", recordId: victim }), "nope"]) {
      const response = await hit(`/t/c/${bad}`);
      expect(response.status).toBe(404);
      expect(response.headers.get("Location")).toBeNull();
      expect(await response.text()).toContain("Link not found");
    }
    await hit(`/t/c/${await token({ kind: "click", recordId: witness, url: "https://acme.example/" })}`);
    await eventuallyEvents(witness, 1);
    expect(await eventsOf(victim)).toEqual([]);
  });
});

describe("one-click unsubscribe", () => {
  it("shows a confirmation page on GET that changes nothing", async () => {
    const { records } = await setUp();
    const unsubscribe = await token({ kind: "unsubscribe", recordId: records[0]! });
    const page = await hit(`/u/${unsubscribe}`);
    expect(page.status).toBe(200);
    expect(page.headers.get("Content-Type")).toContain("text/html");
    const html = await page.text();
    expect(html).toContain(`<form method="post" action="/u/${unsubscribe}">`);
    expect(page.headers.get("Set-Cookie")).toBeNull();
    expect(await eventsOf(records[0]!)).toEqual([]);
    expect(await recordOf(records[0]!)).toMatchObject({ state: "DRAFTED", has_unsubscribed: false });
    expect((await hit(`/u/${await token({ kind: "open", recordId: records[0]! })}`)).status).toBe(404);
  });

  it("stops the record at once on POST (RFC 8058 body, no auth), delivers LEAD_UNSUBSCRIBED, and is harmless repeated", async () => {
    const { account, campaign, records } = await setUp();
    const record = records[0]!;
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["LEAD_UNSUBSCRIBED", "EMAIL_OPEN"] });
    const path = `/u/${await token({ kind: "unsubscribe", recordId: record, step: 2, mailboxId: 4 })}`;
    const oneClick = { method: "POST", rawBody: "List-Unsubscribe=One-Click", headers: { "Content-Type": "application/x-www-form-urlencoded" } };

    const response = await call(path, oneClick);
    expect(response.status).toBe(200);
    expect(response.headers.get("Set-Cookie")).toBeNull();
    expect(await response.text()).toContain("unsubscribed");
    expect(await recordOf(record)).toMatchObject({ state: "STOPPED", has_unsubscribed: true });
    expect(await eventsOf(record)).toMatchObject([{ type: "UNSUBSCRIBE", sequence_number: 2, email_account_id: 4 }]);
    const deliveries = await deliveriesOf(hook.id);
    expect(deliveries.map((d) => d.event_type)).toEqual(["LEAD_UNSUBSCRIBED"]);
    expect(JSON.parse(deliveries[0]!.payload)).toMatchObject({ sl_email_lead_map_id: record, campaign_id: campaign, source: "link", time_unsubscribed: expect.stringMatching(/Z$/) });
    expect(await received(1)).toMatchObject([{ event_type: "LEAD_UNSUBSCRIBED", sl_email_lead_map_id: record }]);

    expect((await call(path, oneClick)).status).toBe(200);
    expect((await call(path, { method: "POST", rawBody: "anything at all" })).status).toBe(200);
    expect(await eventsOf(record)).toHaveLength(1);
    expect(await deliveriesOf(hook.id)).toHaveLength(1);
    expect(await recordOf(record)).toMatchObject({ state: "STOPPED", has_unsubscribed: true });
  });

  it("refuses a forged token with 404 and changes nothing", async () => {
    const { records } = await setUp();
    const good = await token({ kind: "unsubscribe", recordId: records[0]! });
    const response = await call(`/u/${good.slice(0, -3)}AAA`, { method: "POST", rawBody: "List-Unsubscribe=One-Click" });
    expect(response.status).toBe(404);
    expect(await recordOf(records[0]!)).toMatchObject({ state: "DRAFTED", has_unsubscribed: false });
  });
});

describe("webhooks from tracking", () => {
  it("deliver EMAIL_OPEN and EMAIL_LINK_CLICK with is_bot", async () => {
    const { account, campaign, records } = await setUp();
    const hook = await createWebhook(account.apiKey, campaign, { event_types: ["EMAIL_OPEN", "EMAIL_LINK_CLICK"] });
    await (await hit(`/t/o/${await token({ kind: "open", recordId: records[0]! })}.gif`, "HEAD")).arrayBuffer();
    await eventuallyEvents(records[0]!, 1);
    await hit(`/t/c/${await token({ kind: "click", recordId: records[0]!, url: "https://acme.example/x" })}`);
    await eventuallyEvents(records[0]!, 2);
    const payloads = (await deliveriesOf(hook.id)).map((d) => JSON.parse(d.payload));
    expect(payloads).toMatchObject([
      { event_type: "EMAIL_OPEN", is_bot: true, sl_email_lead_map_id: records[0] },
      { event_type: "EMAIL_LINK_CLICK", is_bot: false, link_clicked: ["https://acme.example/x"] },
    ]);
    expect(await received(2)).toHaveLength(2);
  });
});

describe("human-only analytics", () => {
  it("keeps the raw open and click counts and adds counts without machine hits", async () => {
    const { account, campaign, records } = await setUp(2);
    const [a, b] = records as [number, number];
    const open = async (record: number, method: string, agent: string) =>
      (await hit(`/t/o/${await token({ kind: "open", recordId: record })}.gif`, method, agent)).arrayBuffer();
    const click = async (record: number, method: string, agent: string) =>
      hit(`/t/c/${await token({ kind: "click", recordId: record, url: "https://acme.example/" })}`, method, agent);

    await open(a, "GET", PERSON);
    await open(a, "GET", PERSON);
    await open(a, "GET", "Mozilla/5.0");
    await open(b, "HEAD", PERSON);
    await click(a, "GET", PERSON);
    await click(b, "GET", "Proofpoint URL Defense");
    await eventuallyEvents(a, 4);
    await eventuallyEvents(b, 2);
    // The ingestion API takes the flag too.
    await ingestOk(account.apiKey, campaign, [
      { type: "CLICK", email_lead_map_id: b, occurred_at: new Date().toISOString(), link_url: "https://acme.example/", is_machine: true },
      { type: "OPEN", email_lead_map_id: b, occurred_at: new Date().toISOString() },
    ]);

    const today = new Date().toISOString().slice(0, 10);
    const { status, body } = await analytics(account.apiKey, campaign, { start_date: today, end_date: today });
    expect(status).toBe(200);
    expect(body).toMatchObject({
      open_count: "5",
      unique_open_count: "2",
      human_open_count: "3",
      unique_human_open_count: "2",
      click_count: "3",
      unique_click_count: "2",
      human_click_count: "1",
      unique_human_click_count: "1",
    });
  });

  it("counts from the covering index alone", async () => {
    const plan = await fileEnv().DB.prepare(
      `EXPLAIN QUERY PLAN SELECT count(DISTINCT e.campaign_lead_id) FROM events e INDEXED BY events_campaign_type_time_idx
       WHERE e.campaign_id = 1 AND e.type = 'OPEN' AND e.occurred_at >= 0 AND e.occurred_at < 1 AND e.is_machine = 0`,
    ).all<{ detail: string }>();
    expect(plan.results.map((row) => row.detail).join("\n")).toContain("USING COVERING INDEX events_campaign_type_time_idx");
  });
});

describe("the tracking queue", () => {
  it("records the hits of each message, a message that holds several and one sent before hits were batched", async () => {
    const { records } = await setUp(4);
    const batch = createMessageBatch<TrackingMessage>("salvo-tracking", [
      { id: "several", timestamp: new Date(), attempts: 1, body: records.slice(0, 3).map((recordId) => openHit(recordId)) },
      { id: "one", timestamp: new Date(), attempts: 1, body: openHit(records[3]!) },
    ]);
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    expect(await getQueueResult(batch, ctx)).toMatchObject({ outcome: "ok", retryMessages: [] });
    for (const recordId of records) expect((await eventsOf(recordId)).map((e) => e.type)).toEqual(["OPEN"]);
  });

  it("records a write too large for one statement in halves: a second of clicks on long links, every one once", async () => {
    const { records } = await setUp(4);
    const url = `https://example.com/${"a".repeat(6_000)}`;
    const click = (recordId: number) => ({ ...openHit(recordId), type: "CLICK" as const, payload: { kind: "click" as const, recordId, step: 1, mailboxId: null, sentAt: Date.now() - 60_000, url }, eventId: `salvo-click:${crypto.randomUUID()}` });
    // 40 messages of 10 clicks: one write of 400 by the groups, 2.4 MB of links, more than D1 takes in one string.
    const messages = Array.from({ length: 40 }, (_, i) => ({ id: `m${i}`, timestamp: new Date(), attempts: 1, body: Array.from({ length: 10 }, (_, j) => click(records[(i * 10 + j) % 4]!)) }));
    const batch = createMessageBatch<TrackingMessage>("salvo-tracking", messages);
    // Local D1 takes a longer string than D1 does (2,000,000 bytes): each statement's parameters are watched on their way.
    const longest: number[] = [];
    const d1 = Object.getPrototypeOf(env.DB) as D1Database;
    const d1Batch = d1.batch;
    const watched = vi.spyOn(d1, "batch").mockImplementation(function (this: D1Database, statements) {
      for (const statement of statements) {
        const params = (statement as unknown as { params: unknown[] }).params;
        longest.push(Math.max(0, ...params.map((param) => (typeof param === "string" ? new TextEncoder().encode(param).length : 0))));
      }
      return d1Batch.call(this, statements);
    });
    const ctx = createExecutionContext();
    await worker.queue(batch, env);
    watched.mockRestore();
    expect(await getQueueResult(batch, ctx)).toMatchObject({ outcome: "ok", retryMessages: [] });
    expect(Math.max(...longest)).toBeGreaterThan(500_000);
    expect(Math.max(...longest)).toBeLessThanOrEqual(2_000_000);
    for (const recordId of records) {
      const rows = await eventsOf(recordId);
      expect(rows).toHaveLength(100);
      expect(new Set(rows.map((row) => row.event_id)).size).toBe(100);
      expect(rows.every((row) => row.type === "CLICK" && row.link_url === url)).toBe(true);
    }
  });

  it("records a batch of hits once, even when the batch is delivered twice", async () => {
    const { records } = await setUp(2);
    const payload = (recordId: number) => ({ kind: "open" as const, recordId, step: 1, mailboxId: null, sentAt: Date.now() - 60_000 });
    const events = records.map((recordId, i) => ({ type: "OPEN" as const, payload: payload(recordId), occurredAt: Date.now(), isMachine: false, eventId: `salvo-open:batch-${i}` }));
    await recordTrackedEvents(fileEnv() as unknown as Bindings, events);
    await recordTrackedEvents(fileEnv() as unknown as Bindings, events);
    for (const recordId of records) expect((await eventsOf(recordId)).map((e) => e.type)).toEqual(["OPEN"]);
  });
});

describe("a burst of hits", () => {
  afterEach(() => vi.restoreAllMocks());

  it("goes to the queue in a few messages, each hit recorded once", async () => {
    const { records } = await setUp(30);
    const sendBatch = vi.spyOn(env.TRACKING_QUEUE, "sendBatch");
    const send = vi.spyOn(env.TRACKING_QUEUE, "send");
    const pixels = await Promise.all(records.map(async (recordId) => `/t/o/${await token({ kind: "open", recordId })}.gif`));
    await Promise.all(pixels.map(async (pixel) => (await hit(pixel)).arrayBuffer()));
    for (const recordId of records) expect((await eventuallyEvents(recordId, 1)).map((e) => e.type)).toEqual(["OPEN"]);
    expect(sendBatch).not.toHaveBeenCalled();
    expect(send.mock.calls.flatMap(([body]) => hitsOf(body as TrackingMessage)).length).toBe(30);
    expect(send.mock.calls.length).toBeLessThan(5);
  });

  it("closes a message before the queue's size limit: clicks with long links go in several", async () => {
    const { records } = await setUp(24);
    const send = vi.spyOn(env.TRACKING_QUEUE, "send");
    const url = `https://example.com/${"a".repeat(6_000)}`;
    const clicks = await Promise.all(records.map(async (recordId) => `/t/c/${await token({ kind: "click", recordId, url })}`));
    await Promise.all(clicks.map(async (click) => (await hit(click)).arrayBuffer()));
    for (const recordId of records) expect((await eventuallyEvents(recordId, 1)).map((e) => e.link_url)).toEqual([url]);
    const sizes = send.mock.calls.map(([body]) => new TextEncoder().encode(JSON.stringify(body)).length);
    expect(sizes.length, "24 hits of 6 KB: more than one message").toBeGreaterThan(1);
    expect(Math.max(...sizes), "each under the 128 KB a queue message holds").toBeLessThan(128 * 1024);
  });

  it("is recorded directly when the queue refuses it", async () => {
    const { records } = await setUp(3);
    vi.spyOn(env.TRACKING_QUEUE, "send").mockRejectedValue(new Error("queue unavailable"));
    const pixels = await Promise.all(records.map(async (recordId) => `/t/o/${await token({ kind: "open", recordId })}.gif`));
    await Promise.all(pixels.map(async (pixel) => (await hit(pixel)).arrayBuffer()));
    for (const recordId of records) expect((await eventuallyEvents(recordId, 1)).map((e) => e.type)).toEqual(["OPEN"]);
  });
});
