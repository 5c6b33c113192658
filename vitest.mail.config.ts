import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import { fakeWorkersAi, quietAccessLog, testBindings, testResolverUrl } from "./vitest.shared";

/**
 * Workers-runtime tests against the real mail lab (`npm run test:mail`, which starts the lab and sets
 * NODE_EXTRA_CA_CERTS so workerd trusts the lab's CA). Kept apart from the main suite: these need
 * Postfix and Dovecot on the machine.
 */
const OAUTH_VARS = [
  "GOOGLE_OAUTH_CLIENT_ID",
  "GOOGLE_OAUTH_CLIENT_SECRET",
  "GOOGLE_OAUTH_AUTHORIZE_URL",
  "GOOGLE_OAUTH_TOKEN_URL",
  "GOOGLE_OAUTH_ISSUER",
  "MICROSOFT_OAUTH_CLIENT_ID",
  "MICROSOFT_OAUTH_CLIENT_SECRET",
  "MICROSOFT_OAUTH_AUTHORITY",
  "MICROSOFT_OAUTH_ISSUER",
  "GOOGLE_MAIL_SERVERS",
  "MICROSOFT_MAIL_SERVERS",
];

function labOAuthVars(): Record<string, string> {
  return Object.fromEntries(OAUTH_VARS.flatMap((name) => (process.env[name] ? [[name, process.env[name]!]] : [])));
}

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
            // The lab listens on 127.0.0.1.
            ALLOW_LOCAL_MAIL_HOSTS: "true",
            MAILBOX_CONNECTION_CHECKS: "true",
            // The lab's Rspamd, exported by scripts/with-mail-lab.mjs like the lab's CA.
            RSPAMD_URL: process.env.RSPAMD_URL ?? "",
            // The lab's OAuth provider as the deployment's Google and Microsoft (exported by scripts/with-mail-lab.mjs).
            ...labOAuthVars(),
          },
          workers: fakeWorkersAi.workers,
          serviceBindings: fakeWorkersAi.serviceBindings,
        },
      }),
    ],
    test: {
      include: ["test/mail/**/*.test.ts"],
      globalSetup: ["./test/mail/lab.global.ts", "./test/mail/hostile.global.ts", "./test/platform/outbound.global.ts"],
      // One runtime for the files, one after another (the lab's mailboxes are shared anyway), each
      // starting on emptied storage: loading the Worker into a new runtime per file cost more.
      setupFiles: ["./test/fresh-storage.ts"],
      isolate: false,
      testTimeout: 30_000,
      onConsoleLog: quietAccessLog,
    },
  };
});
