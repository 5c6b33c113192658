import { createScheduledController } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { asc, eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { ADMIN_TOKEN, call, callJson, provisionAccount, fileEnv } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { manualBody } from "./fixtures";

const admin = { Authorization: `Bearer ${ADMIN_TOKEN}` };

interface Seed {
  id: number;
  provider_id: string;
  email: string;
  polled: boolean;
}

function fireCron(at: number) {
  return worker.scheduled(createScheduledController({ scheduledTime: at, cron: "* * * * *" }), fileEnv());
}

async function seedsOf(providerId: string): Promise<Seed[]> {
  const { body } = await callJson<{ data: Seed[] }>("/admin/v1/seed-mailboxes", { headers: admin });
  return body.data.filter((seed) => seed.provider_id === providerId);
}

const register = (body: Record<string, unknown>) => callJson<Seed & Record<string, unknown>>("/admin/v1/seed-mailboxes", { method: "POST", headers: admin, body });
const remove = (id: number) => call(`/admin/v1/seed-mailboxes/${id}`, { method: "DELETE", headers: admin });

async function offered(apiKey: string): Promise<Map<string, string>> {
  const { body } = await callJson<{ groups: { providers: { provider_id: string; seed_email: string }[] }[] }[]>("/api/v1/spam-test/seed/providers", { apiKey });
  return new Map(body.flatMap((r) => r.groups.flatMap((g) => g.providers)).map((p) => [p.provider_id, p.seed_email]));
}

async function cells(testId: string) {
  const t = schema.spamTestResults;
  return testDb()
    .select({ provider_id: t.providerId, sender_email: t.senderEmail, seed_email: t.seedEmail, folder: t.folder, send_at: t.sendAt })
    .from(t)
    .where(eq(t.spamTestId, Number(testId)))
    .orderBy(asc(t.senderEmail), asc(t.sendAt), asc(t.providerId), asc(t.seedEmail))
    .all();
}

describe("seed mailboxes (operator routes)", () => {
  it("registers a seed with its IMAP password encrypted at rest and never answered, and refuses bad registrations", async () => {
    const password = "seed-secret-Naver-1";
    const created = await register({
      provider_id: "naver",
      email: "Seed1@Naver-Seeds.example",
      imap_host: "imap.naver-seeds.example",
      password,
      spam_folders: ["Spam"],
      tab_folders: ["Promotions"],
    });
    expect(created.status, JSON.stringify(created.body)).toBe(200);
    expect(created.body).toMatchObject({ provider_id: "naver", email: "seed1@naver-seeds.example", polled: true, imap_port: 993, imap_security: "tls", inbox_folders: ["INBOX"] });
    expect(JSON.stringify(created.body)).not.toContain(password);
    const stored = await testDb().select({ imapPassword: schema.seedMailboxes.imapPassword }).from(schema.seedMailboxes).where(eq(schema.seedMailboxes.id, created.body.id)).get();
    expect(stored!.imapPassword).not.toContain(password);
    expect(stored!.imapPassword!.length).toBeGreaterThan(password.length);
    const listed = await seedsOf("naver");
    expect(listed.map((s) => [s.email, s.polled])).toEqual([
      ["seed+naver@placement.salvo.email", false],
      ["seed1@naver-seeds.example", true],
    ]);
    expect(JSON.stringify(listed)).not.toContain(password);

    expect((await register({ provider_id: "no-such", email: "x@seeds.example" })).status).toBe(400);
    expect((await register({ provider_id: "naver", email: "seed1@naver-seeds.example" })).status).toBe(400);
    expect((await register({ provider_id: "naver", email: "y@seeds.example", imap_host: "imap.seeds.example" })).status).toBe(400);
    expect((await register({ provider_id: "naver", email: "y@seeds.example", password: "p" })).status).toBe(400);
    expect((await register({ provider_id: "naver", email: "y@seeds.example", imap_host: "127.0.0.1", password: "p" })).status).toBe(422);
    expect((await register({ provider_id: "naver", email: "y@seeds.example", imap_security: "plain" })).status).toBe(422);
    expect((await callJson("/admin/v1/seed-mailboxes", { method: "POST", body: { provider_id: "naver", email: "z@seeds.example" } })).status).toBe(401);
    expect((await remove(999_999)).status).toBe(404);
    expect((await remove(created.body.id)).status).toBe(200);
  });

  it("offers a provider only while it has a seed, and creation agrees with the catalogue", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const [placeholder] = await seedsOf("rediffmail");
    expect((await offered(account.apiKey)).get("rediffmail")).toBe("seed+rediffmail@placement.salvo.email");
    try {
      expect((await remove(placeholder!.id)).status).toBe(200);
      expect((await offered(account.apiKey)).has("rediffmail")).toBe(false);
      const refused = await callJson<{ details?: { path: string; message: string }[] }>("/api/v1/spam-test/manual", {
        method: "POST",
        apiKey: account.apiKey,
        body: manualBody(campaign, { provider_ids: ["gmail", "rediffmail"] }),
      });
      expect(refused.status).toBe(422);
      expect(JSON.stringify(refused.body)).toContain("Unknown provider rediffmail");

      const seed = await register({ provider_id: "rediffmail", email: "inbox@rediff-seeds.example" });
      expect((await offered(account.apiKey)).get("rediffmail")).toBe("inbox@rediff-seeds.example");
      expect((await callJson("/api/v1/spam-test/manual", { method: "POST", apiKey: account.apiKey, body: manualBody(campaign, { provider_ids: ["rediffmail"] }) })).status).toBe(200);
      expect((await remove(seed.body.id)).status).toBe(200);
    } finally {
      await register({ provider_id: "rediffmail", email: "seed+rediffmail@placement.salvo.email" });
    }
  });

  it("makes one cell per provider x sender x seed; a hand-typed result without a seed fills the cell of the run's first seed", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const second = await register({ provider_id: "uol", email: "second@uol-seeds.example" });
    try {
      const created = await callJson<{ id: string; seed_emails: { provider_id: string; email: string }[] }>("/api/v1/spam-test/manual", {
        method: "POST",
        apiKey: account.apiKey,
        body: manualBody(campaign, { provider_ids: ["uol", "gmail"] }),
      });
      expect(created.status).toBe(200);
      expect(created.body.seed_emails).toEqual([
        { provider_id: "gmail", email: "seed+gmail@placement.salvo.email" },
        { provider_id: "uol", email: "seed+uol@placement.salvo.email" },
        { provider_id: "uol", email: "second@uol-seeds.example" },
      ]);
      expect((await cells(created.body.id)).length).toBe(6);
      const recorded = await callJson(`/api/v1/spam-test/${created.body.id}/results`, {
        method: "POST",
        apiKey: account.apiKey,
        body: {
          results: [
            { provider_id: "uol", sender_email: "a@sender.example", folder: "inbox" },
            { provider_id: "uol", sender_email: "a@sender.example", seed_email: "second@uol-seeds.example", folder: "spam" },
          ],
        },
      });
      expect(recorded.status).toBe(200);
      const uolA = (await cells(created.body.id)).filter((c) => c.provider_id === "uol" && c.sender_email === "a@sender.example");
      expect(uolA.map((c) => [c.seed_email, c.folder])).toEqual([
        ["second@uol-seeds.example", "spam"],
        ["seed+uol@placement.salvo.email", "inbox"],
      ]);
    } finally {
      await remove(second.body.id);
    }
  });
});

describe("sending times and the deadline", () => {
  it("spaces an automated run's emails per sender by min_time_btwn_emails, or sends them all at the slot", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const start = Date.parse("2031-03-03T09:00:00Z");
    const schedule = (overrides: Record<string, unknown>) =>
      callJson<{ id: string }>("/api/v1/spam-test/schedule", {
        method: "POST",
        apiKey: account.apiKey,
        body: manualBody(campaign, {
          provider_ids: ["gmail", "outlook", "yahoo"],
          schedule_start_time: new Date(start).toISOString(),
          test_end_date: "2031-03-10T00:00:00Z",
          scheduler_cron_value: "0 9 * * *",
          ...overrides,
        }),
      });
    const spaced = await schedule({ min_time_btwn_emails: 10, min_time_unit: "minutes" });
    const together = await schedule({ all_email_sent_without_time_gap: true });
    await fireCron(start);
    const minutes = (testCells: { sender_email: string; send_at: Date | null }[]) => testCells.map((c) => [c.sender_email, (c.send_at!.getTime() - start) / 60_000]);
    expect(minutes(await cells(spaced.body.id))).toEqual([
      ["a@sender.example", 0],
      ["a@sender.example", 10],
      ["a@sender.example", 20],
      ["b@sender.example", 0],
      ["b@sender.example", 10],
      ["b@sender.example", 20],
    ]);
    expect(minutes(await cells(together.body.id)).map(([, m]) => m)).toEqual([0, 0, 0, 0, 0, 0]);
  });

  it("turns cells still pending past their deadline into not_received on the minute cron, and a later hand-typed result still counts", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const created = await callJson<{ id: string }>("/api/v1/spam-test/manual", { method: "POST", apiKey: account.apiKey, body: manualBody(campaign) });
    const [run] = await testDb().select().from(schema.spamTestRuns).where(eq(schema.spamTestRuns.spamTestId, Number(created.body.id))).all();
    const startedAt = run!.startedAt.getTime();
    await fireCron(startedAt + 59 * 60_000);
    expect((await cells(created.body.id)).map((c) => c.folder)).toEqual(["pending", "pending", "pending", "pending"]);
    await fireCron(startedAt + 60 * 60_000);
    expect((await cells(created.body.id)).map((c) => c.folder)).toEqual(["not_received", "not_received", "not_received", "not_received"]);
    await callJson(`/api/v1/spam-test/${created.body.id}/results`, {
      method: "POST",
      apiKey: account.apiKey,
      body: { results: [{ provider_id: "gmail", sender_email: "a@sender.example", folder: "inbox" }] },
    });
    const { body } = await callJson<{ data: { providers: { provider_id: string; inbox_count: number; not_received_count: number }[] } }>(
      "/api/v1/smart-delivery/provider-report",
      { method: "POST", apiKey: account.apiKey, body: { spam_test_id: created.body.id } },
    );
    expect(body.data.providers.find((p) => p.provider_id === "gmail")).toMatchObject({ inbox_count: 1, not_received_count: 1 });
  });
});
