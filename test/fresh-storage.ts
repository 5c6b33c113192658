import { applyD1Migrations, env, reset } from "cloudflare:test";
import { afterAll } from "vitest";

/**
 * Setup of the files that need storage of their own (vitest.config.ts, FRESH_STORAGE; the mail
 * suite's): they share a runtime one after another (loading the Worker's modules into a new one
 * cost 10-25 s a file), so each starts by emptying every database, Durable Object and queue the
 * previous file left (~0.1 s), alarms and pending retries included, then migrates (~0.5 s). It
 * empties them again when the file ends, so no queue retry or alarm of its own runs (and logs) while
 * the runtime shuts down (test/setup.ts says why).
 */
await reset();
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
afterAll(() => reset());
