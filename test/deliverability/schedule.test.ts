import { createScheduledController } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import worker from "../../src/index";
import { asc, eq } from "drizzle-orm";
import { schema, testDb } from "../db";
import { callJson, provisionAccount, fileEnv } from "../helpers";
import { createCampaign } from "../campaigns/fixtures";
import { manualBody } from "./fixtures";
import { dueSpamTests, startDueRuns } from "../../src/deliverability/runs-store";
import { dueSlots } from "../../src/deliverability/schedule";

function fireCron(at: string | number) {
  return worker.scheduled(createScheduledController({ scheduledTime: new Date(at).getTime(), cron: "* * * * *" }), fileEnv());
}

async function runsOf(testId: string) {
  const t = schema.spamTestRuns;
  const rows = await testDb().select().from(t).where(eq(t.spamTestId, Number(testId))).orderBy(asc(t.runNo)).all();
  return rows.map((r) => ({ run: r.runNo, at: r.slotAt.toISOString() }));
}

async function testRow(testId: string) {
  const t = schema.spamTests;
  return testDb().select({ status: t.status, test_run_no: t.testRunNo, next_run_at: t.nextRunAt }).from(t).where(eq(t.id, Number(testId))).get();
}

/** Every 2 days at 06:50 in Asia/Kolkata (01:20 UTC), weekdays only, through December 2026. */
async function kolkataTest(schedulerCronValue: unknown = { tz: "Asia/Kolkata", days: [1, 2, 3, 4, 5], startHour: "06:50" }) {
  const account = await provisionAccount();
  const campaign = await createCampaign(account.apiKey);
  const { status, body } = await callJson<Record<string, unknown> & { id: string }>("/api/v1/spam-test/schedule", {
    method: "POST",
    apiKey: account.apiKey,
    body: {
      ...manualBody(campaign, { provider_ids: ["gmail"], sender_accounts: ["a@sender.example", "b@sender.example"] }),
      schedule_start_time: "2026-12-01T00:00:00Z",
      test_end_date: "2026-12-31T00:00:00Z",
      every_days: 2,
      scheduler_cron_value: schedulerCronValue,
      tz: "Asia/Kolkata",
    },
  });
  if (status !== 200) throw new Error(`schedule failed: ${status} ${JSON.stringify(body)}`);
  return { account, test: body };
}

const DECEMBER_RUNS = ["01", "03", "07", "09", "11", "14", "16", "18", "21", "23", "25", "28", "30"].map((day) => `2026-12-${day}T01:20:00.000Z`);

describe("scheduled spam tests", () => {
  it("creates an automated test with the scheduled fields, the object cron turned into a string", async () => {
    const { test } = await kolkataTest();
    expect(test).toMatchObject({
      test_type: "automated",
      status: "active",
      schedule_start_time: "2026-12-01T00:00:00.000Z",
      test_end_date: "2026-12-31T00:00:00.000Z",
      every_days: 2,
      scheduler_cron_value: "50 6 * * 1,2,3,4,5",
    });
    expect(await testRow(test.id)).toMatchObject({ test_run_no: 0, next_run_at: new Date(DECEMBER_RUNS[0]!) });
  });

  it("runs at the right instants across a month, one run per slot, and completes after its end date", async () => {
    const { test } = await kolkataTest("50 6 * * 1-5");
    await fireCron("2026-12-01T01:19:00Z");
    expect(await runsOf(test.id)).toEqual([]);
    // Fire at every slot, each twice (an overlapping or repeated firing), and once a minute later.
    for (const slot of DECEMBER_RUNS) {
      await fireCron(slot);
      await fireCron(slot);
      await fireCron(Date.parse(slot) + 60_000);
    }
    expect(await runsOf(test.id)).toEqual(DECEMBER_RUNS.map((at, i) => ({ run: i + 1, at })));
    expect(await testRow(test.id)).toMatchObject({ status: "completed", test_run_no: 13, next_run_at: null });
    expect(await testDb().$count(schema.spamTestResults, eq(schema.spamTestResults.spamTestId, Number(test.id)))).toBe(13 * 2);
    await fireCron("2027-01-04T01:20:00Z");
    expect(await runsOf(test.id)).toHaveLength(13);
  });

  it("catches up every missed slot when the cron comes late", async () => {
    const { test } = await kolkataTest();
    await fireCron("2026-12-10T00:00:00Z");
    expect((await runsOf(test.id)).map((r) => r.at)).toEqual(DECEMBER_RUNS.slice(0, 4));
    expect(await testRow(test.id)).toMatchObject({ status: "active", next_run_at: new Date(DECEMBER_RUNS[4]!) });
  });

  it("starts nothing for a stopped test", async () => {
    const { account, test } = await kolkataTest();
    await callJson(`/api/v1/spam-test/${test.id}/stop`, { method: "PUT", apiKey: account.apiKey });
    await fireCron("2026-12-31T00:00:00Z");
    expect(await runsOf(test.id)).toEqual([]);
  });

  it("keeps a test stopped while a firing that read it as due is under way, and starts no run of it", async () => {
    const { account, test } = await kolkataTest();
    const now = Date.parse(DECEMBER_RUNS[1]!);
    // The firing reads the due tests, then the user stops the test before its runs are written.
    const due = (await dueSpamTests(testDb(), now, 1000)).filter((row) => row.id === Number(test.id));
    expect(due).toHaveLength(1);
    const stopped = await callJson(`/api/v1/spam-test/${test.id}/stop`, { method: "PUT", apiKey: account.apiKey });
    expect(stopped.status).toBe(200);
    await startDueRuns(fileEnv().DB, due.map((row) => ({ testId: row.id, slots: dueSlots(row, now) })), now);
    expect(await runsOf(test.id)).toEqual([]);
    expect(await testRow(test.id)).toMatchObject({ status: "stopped", next_run_at: null });
  });

  it("validates the schedule fields with 422", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    const base = {
      ...manualBody(campaign),
      schedule_start_time: "2026-12-01T00:00:00Z",
      test_end_date: "2026-12-31T00:00:00Z",
      scheduler_cron_value: "0 9 * * *",
    };
    const cases: [Record<string, unknown>, string][] = [
      [{ schedule_start_time: "2020-01-01T00:00:00Z" }, "schedule_start_time"],
      [{ test_end_date: "2026-11-30T00:00:00Z" }, "test_end_date"],
      [{ test_end_date: undefined }, "test_end_date"],
      [{ every_days: 0 }, "every_days"],
      [{ every_days: 31 }, "every_days"],
      [{ scheduler_cron_value: "0 9 * *" }, "scheduler_cron_value"],
      [{ scheduler_cron_value: "0 0 9 * * *" }, "scheduler_cron_value"],
      [{ scheduler_cron_value: { days: [8], startHour: "09:00" } }, "scheduler_cron_value.days.0"],
      [{ scheduler_cron_value: { days: [1], startHour: "9am" } }, "scheduler_cron_value.startHour"],
      [{ tz: "Mars/Olympus" }, "tz"],
    ];
    for (const [override, path] of cases) {
      const { status, body } = await callJson("/api/v1/spam-test/schedule", { method: "POST", apiKey: account.apiKey, body: { ...base, ...override } });
      expect(status, JSON.stringify(override)).toBe(422);
      expect(body).toMatchObject({ details: expect.arrayContaining([expect.objectContaining({ path: expect.stringContaining(path.split(".")[0]!) })]) });
    }
  });
});
