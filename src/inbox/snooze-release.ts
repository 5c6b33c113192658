import { releaseSnoozes } from "./store";
import type { ScheduledJob } from "../platform/jobs";

/** Every snooze whose time has come ends, so its conversation is back in the active inbox. */
export const releaseDueSnoozes: ScheduledJob = (env, scheduledAt) => releaseSnoozes(env.DB, scheduledAt.getTime());
