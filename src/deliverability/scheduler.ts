import { database } from "../platform/db";
import { wakeMailboxes } from "../mailboxes/wake";
import { dueSpamTests, senderMailboxesOf, startDueRuns } from "./runs-store";
import { dueSlots } from "./schedule";
import type { ScheduledJob } from "../platform/jobs";

const TESTS_PER_FIRING = 1000;

/**
 * Starts every due run of every active automated test: one run per slot (a repeat firing for the
 * same slot changes nothing), then moves the test to its next slot, or completes it when that
 * slot is past test_end_date. The sender mailboxes of the tests that started a run are woken: their
 * objects send the run's emails.
 */
export const startDueSpamTests: ScheduledJob = async (env, scheduledAt) => {
  const now = scheduledAt.getTime();
  const due = await dueSpamTests(database(env.DB), now, TESTS_PER_FIRING);
  const started = due.map((test) => ({ testId: test.id, slots: dueSlots(test, now) })).filter((test) => test.slots.length > 0);
  await startDueRuns(env.DB, started, now);
  await wakeMailboxes(env, await senderMailboxesOf(env.DB, started.map((test) => test.testId)));
  return started.length;
};
