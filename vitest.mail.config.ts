import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * Workers-runtime tests against the real mail lab (`npm run test:mail`, which starts the lab and sets
 * NODE_EXTRA_CA_CERTS so workerd trusts the lab's CA). Kept apart from the main suite: these need
 * Postfix and Dovecot on the machine.
 */
export default defineConfig(async () => {
  const migrations = await readD1Migrations("./migrations");
  return {
    plugins: [
      cloudflareTest({
        wrangler: { configPath: "./wrangler.toml" },
        miniflare: {
          bindings: {
            TEST_MIGRATIONS: migrations,
            ADMIN_TOKEN: "test-admin-token",
            SECRETS_KEY: "test:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
            RATE_LIMIT_PER_MINUTE: "100000",
            RATE_LIMIT_BURST: "10000",
            // The lab listens on 127.0.0.1.
            ALLOW_LOCAL_MAIL_HOSTS: "true",
            MAILBOX_CONNECTION_CHECKS: "true",
            MAINTENANCE_MODE: "false",
          },
        },
      }),
    ],
    test: {
      include: ["test/mail/**/*.test.ts"],
      globalSetup: ["./test/mail/lab.global.ts"],
      setupFiles: ["./test/setup.ts"],
      testTimeout: 30_000,
      onConsoleLog: (log: string) => !log.includes('"message":"request"'),
    },
  };
});
