import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { quietAccessLog, testBindings } from "./vitest.shared";

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
            ...testBindings,
            TEST_MIGRATIONS: migrations,
            // The lab listens on 127.0.0.1.
            ALLOW_LOCAL_MAIL_HOSTS: "true",
            MAILBOX_CONNECTION_CHECKS: "true",
            // The lab's Rspamd, exported by scripts/with-mail-lab.mjs like the lab's CA.
            RSPAMD_URL: process.env.RSPAMD_URL ?? "",
          },
        },
      }),
    ],
    test: {
      include: ["test/mail/**/*.test.ts"],
      globalSetup: ["./test/mail/lab.global.ts", "./test/mail/hostile.global.ts"],
      // One runtime for the files, one after another (the lab's mailboxes are shared anyway), each
      // starting on emptied storage: loading the Worker into a new runtime per file cost more.
      setupFiles: ["./test/fresh-storage.ts"],
      isolate: false,
      testTimeout: 30_000,
      onConsoleLog: quietAccessLog,
    },
  };
});
