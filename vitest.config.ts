import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";
import { fakeWorkersAi, quietAccessLog, testBindings, testResolverUrl } from "./vitest.shared";

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            ...testBindings,
            ...fakeWorkersAi.categoriser,
            TEST_MIGRATIONS: migrations,
            DNS_RESOLVER_URL: await testResolverUrl(),
            // No mail server here: the connection check runs against the real lab in vitest.mail.config.ts.
            MAILBOX_CONNECTION_CHECKS: "false",
          },
          // An empty database beside DB, where a test builds a pre-migration state to migrate.
          d1Databases: ["MIGRATION_DB"],
          workers: fakeWorkersAi.workers,
          serviceBindings: fakeWorkersAi.serviceBindings,
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      // The mail-lab suite has its own config and runner (npm run test:mail); test/node runs in Node (npm run test:node).
      exclude: [...configDefaults.exclude, "test/mail/**", "test/node/**"],
      setupFiles: ["./test/setup.ts"],
      // Node-side receivers the Workers-runtime tests reach over loopback.
      globalSetup: [
        "./test/webhooks/redirect-receiver.global.ts",
        "./test/openapi-validator.global.ts",
        "./test/deliverability/link-stub.global.ts",
        "./test/triage/openai-server.global.ts",
        "./test/platform/outbound.global.ts",
      ],
      onConsoleLog: quietAccessLog,
    },
  };
});
