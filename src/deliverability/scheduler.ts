import { sql } from "drizzle-orm";
import { rawBatch, statement } from "../platform/sql";
import { startRun } from "./runs-store";
import { slotAfter } from "./schedule";
import type { ScheduledJob } from "../platform/jobs";

interface DueTest {
  id: number;
  next_run_at: number;
  test_end_date: number;
  every_days: number;
  scheduler_cron_value: string;
  time_zone: string;
}

const STATEMENTS_PER_BATCH = 300;
/** A firing catches up at most this many missed slots per test; the next firing does the rest. */
const MAX_SLOTS_PER_FIRING = 50;

/** The runs a test owes at `now`: each slot with where the test stands after it. */
function dueSlots(test: DueTest, now: number) {
  const slots: { slot: number; next: number | null; finished: boolean }[] = [];
  let slot: number | null = test.next_run_at;
  while (slot !== null && slot <= now && slots.length < MAX_SLOTS_PER_FIRING) {
    const next = slotAfter(test.scheduler_cron_value, test.time_zone, slot, test.every_days);
    const finished = next === null || next > test.test_end_date;
    slots.push({ slot, next: finished ? null : next, finished });
    slot = finished ? null : next;
  }
  return slots;
}

/**
 * Starts every due run of every active automated test: one run per slot (a repeat firing for the
 * same slot changes nothing), then moves the test to its next slot, or completes it when that
 * slot is past test_end_date.
 */
export const startDueSpamTests: ScheduledJob = async (env, scheduledAt) => {
  const now = scheduledAt.getTime();
  const due = await statement(
    env.DB,
    sql`SELECT id, next_run_at, test_end_date, every_days, scheduler_cron_value, time_zone FROM spam_tests
        WHERE status = 'active' AND test_type = 'automated' AND next_run_at IS NOT NULL AND next_run_at <= ${now}
        ORDER BY next_run_at LIMIT 1000`,
  ).all<DueTest>();
  const statements = due.results.flatMap((test) =>
    dueSlots(test, now).flatMap(({ slot, next, finished }) =>
      startRun(sql`${test.id}`, slot, { at: next, status: finished ? "completed" : "active" }, now),
    ),
  );
  for (let i = 0; i < statements.length; i += STATEMENTS_PER_BATCH) {
    await rawBatch(env.DB, statements.slice(i, i + STATEMENTS_PER_BATCH));
  }
};
