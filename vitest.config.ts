import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { configDefaults, defineConfig } from "vitest/config";

export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          // Budgets high enough that only the rate-limit tests (which provision their own) meet them.
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token",
            // A fixed keyring for secrets at rest (the bytes 0..31); tests that need others build their own.
            SECRETS_KEY: "test:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
            RATE_LIMIT_PER_MINUTE: "100000",
            RATE_LIMIT_BURST: "10000",
            // Production's webhook URL rules, whatever a developer's .dev.vars says.
            ALLOW_INSECURE_WEBHOOKS: "false",
            // Production's mail host rules too.
            ALLOW_LOCAL_MAIL_HOSTS: "false",
            // No mail server here: the connection check runs against the real lab in vitest.mail.config.ts.
            MAILBOX_CONNECTION_CHECKS: "false",
            MAINTENANCE_MODE: "false",
          },
          // An empty database beside DB, where a test builds a pre-migration state to migrate.
          d1Databases: ["MIGRATION_DB"],
        },
      }),
    ],
    test: {
      include: ["test/**/*.test.ts"],
      // The mail-lab suite has its own config and runner (npm run test:mail).
      exclude: [...configDefaults.exclude, "test/mail/**"],
      setupFiles: ["./test/setup.ts"],
      // Node-side receivers the Workers-runtime tests reach over loopback.
      globalSetup: ["./test/webhooks/redirect-receiver.global.ts"],
      // Access-log lines would drown the test report; errors and warnings still show.
      onConsoleLog: (log: string) => !log.includes('"message":"request"'),
    },
  };
});
