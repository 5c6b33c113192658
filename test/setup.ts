import { applyD1Migrations, env, reset } from "cloudflare:test";
import { afterAll } from "vitest";

await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

/**
 * Nothing a file started may outlive it: queue retries (a webhook delivery to a host that does not
 * answer, a categorisation waiting for the model) run seconds to minutes later and log a line each
 * ("queue batch"). One that ran while the shared runtime shut down sent that line over an RPC vitest
 * was closing (EnvironmentTeardownError: Closing rpc while "onUserConsoleLog" was pending). Emptying
 * the storage drops every pending message, retry and alarm; the next file's setup migrates again.
 */
afterAll(() => reset());
