import { applyD1Migrations, env } from "cloudflare:test";
import { afterAll } from "vitest";
import { closeConsole, openConsole } from "./background-logs";

openConsole();
afterAll(closeConsole);
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);
