import { availableParallelism } from "node:os";
import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { fakeWorkersAi, quietAccessLog, testBindings, testResolverUrl } from "./vitest.shared";

/**
 * Files that spend a failure budget (30 a minute, one back every 2 s) faster than it refills: they
 * run last, one at a time, each in a runtime of its own, so no other file slows their bursts.
 */
const ALONE = [
  "test/auth-hardening.test.ts",
  "test/rate-limit.test.ts",
  // It counts the queue consumer's log lines: in a shared runtime, another file's late webhook retry adds one.
  "test/operations.test.ts",
];

/**
 * Files that need empty storage of their own: what they check or do reaches beyond their own
 * accounts (every row's writes, the cron over every account, the operator's catalogues, every
 * delivery to a host, ids that only fresh counters keep apart, a database built from empty). They
 * share a runtime one after another, and test/fresh-storage.ts empties every database, Durable
 * Object and queue before each. A file newly failing only when the whole suite runs belongs here.
 */
const FRESH_STORAGE = [
  // The write log sees every write, whoever made it; the fuzz drives the admin routes with random ids.
  // (Their coverage tests only read the OpenAPI document.)
  "test/security-matrix/!(coverage).test.ts",
  "test/fuzz/!(coverage).test.ts",
  // The cron's jobs and the metrics count every account's rows (test/operations.test.ts runs alone, below).
  "test/deliverability/schedule.test.ts",
  "test/deliverability/seeds.test.ts",
  "test/inbox/actions.test.ts",
  "test/webhooks/delivery.test.ts",
  "test/webhooks/secrets.test.ts",
  // The retention pass prunes every account's old deliveries: its chunk counts hold on fresh storage only.
  "test/retention/webhook-deliveries.test.ts",
  // A webhook receiver stand-in sees every delivery to its host, a previous file's retries too.
  "test/tracking/routes.test.ts",
  "test/leads/changes.test.ts",
  "test/webhooks/webhooks.test.ts",
  "test/webhooks/global.test.ts",
  // A route that takes a record id or a lead id reads a record first: only fresh id counters keep
  // the lead ids these name apart from other records' ids.
  "test/leads/lookup.test.ts",
  // Its cron run goes over every shard's rows.
  "test/platform/shards.test.ts",
  // Moves raise fences on both shards and give shard 0 a fresh id block.
  "test/moves/move.test.ts",
  // It rewrites the query planner's statistics of the events table.
  "test/triage/named-replies-plan.test.ts",
  // These build MIGRATION_DB from empty.
  "test/webhooks/scope-migration.test.ts",
  "test/campaigns/client-isolation-migration.test.ts",
  "test/analytics/spans-lead-migration.test.ts",
  "test/analytics/inbox-reply-migration.test.ts",
  "test/analytics/failures.test.ts",
  "test/campaigns/folder-scope-migration.test.ts",
  "test/mailboxes/from-name-migration.test.ts",
];

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  const directoryMigrations = await readD1Migrations("./directory-migrations");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            ...testBindings,
            ...fakeWorkersAi.categoriser,
            TEST_MIGRATIONS: migrations,
            TEST_DIRECTORY_MIGRATIONS: directoryMigrations,
            DNS_RESOLVER_URL: await testResolverUrl(),
            // No mail server here: the connection check runs against the real lab in vitest.mail.config.ts.
            MAILBOX_CONNECTION_CHECKS: "false",
            // No webhook post is in flight in a test's move (the queue runs when a test hands it a batch).
            MOVE_WEBHOOK_GRACE_SECONDS: "0",
          },
          // An empty database beside DB, where a test builds a pre-migration state to migrate.
          d1Databases: ["MIGRATION_DB"],
          workers: fakeWorkersAi.workers,
          serviceBindings: fakeWorkersAi.serviceBindings,
        },
      }),
    ],
    test: {
      // Node-side receivers the Workers-runtime tests reach over loopback.
      globalSetup: [
        "./test/webhooks/redirect-receiver.global.ts",
        "./test/openapi-validator.global.ts",
        "./test/deliverability/link-stub.global.ts",
        "./test/triage/openai-server.global.ts",
        "./test/platform/outbound.global.ts",
      ],
      onConsoleLog: quietAccessLog,
      // Vitest's default (cores - 1) runs one file at a time on 2 cores, leaving one idle.
      maxWorkers: Math.max(2, availableParallelism() - 1),
      // Vitest's 5 s is too short for the heavier tests when two files share a loaded machine's cores.
      testTimeout: 30_000,
      projects: [
        {
          extends: true as const,
          test: {
            name: "workers",
            include: ["test/**/*.test.ts"],
            // The mail-lab suite has its own config and runner (npm run test:mail); test/node runs in Node (npm run test:node).
            exclude: [...configDefaults.exclude, "test/mail/**", "test/node/**", ...FRESH_STORAGE, ...ALONE],
            setupFiles: ["./test/setup.ts"],
            // One runtime (and database) per worker, reused by its files: starting workerd and loading
            // the Worker for each file cost more than most files' tests. Each file makes its own
            // accounts, so it sees only its own rows.
            isolate: false,
          },
        },
        { extends: true as const, test: { name: "workers-fresh-storage", include: FRESH_STORAGE, setupFiles: ["./test/fresh-storage.ts"], isolate: false } },
        {
          extends: true as const,
          test: { name: "workers-alone", include: ALONE, setupFiles: ["./test/setup.ts"], maxWorkers: 1, sequence: { groupOrder: 1 } },
        },
      ],
    },
  };
});
