import { reset } from "cloudflare:test";
import { afterAll } from "vitest";
import { closeConsole, openConsole } from "./background-logs";
import { migrateEveryDatabase } from "./storage";

/**
 * Setup of the files that need storage of their own (vitest.config.ts, FRESH_STORAGE; the mail
 * suite's): they share a runtime one after another (loading the Worker's modules into a new one
 * cost 10-25 s a file), so each starts by emptying every database, Durable Object and queue the
 * previous file left (~0.1 s), alarms and pending retries included, then migrates (~0.5 s). What
 * the file's leftover work logs after its tests end is dropped (test/background-logs.ts says why).
 */
openConsole();
afterAll(closeConsole);
await reset();
await migrateEveryDatabase();
