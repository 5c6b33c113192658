/**
 * Bindings both Workers-runtime suites run with (vitest.config.ts, vitest.mail.config.ts):
 * production's rules, budgets high enough that only the rate-limit tests (which provision their own)
 * meet them, and a fixed keyring for secrets at rest (the bytes 0..31).
 */
export const testBindings = {
  ADMIN_TOKEN: "test-admin-token",
  SECRETS_KEY: "test:AAECAwQFBgcICQoLDA0ODxAREhMUFRYXGBkaGxwdHh8=",
  RATE_LIMIT_PER_MINUTE: "100000",
  RATE_LIMIT_BURST: "10000",
  // Production's webhook URL and mail host rules, whatever a developer's .dev.vars says.
  ALLOW_INSECURE_WEBHOOKS: "false",
  ALLOW_LOCAL_MAIL_HOSTS: "false",
  MAINTENANCE_MODE: "false",
  PUBLIC_URL: "https://salvo.test",
  // A deployment Google app (Microsoft has none, so its refusal is tested); its token endpoint answers nothing here,
  // so a consent ends in token_exchange_failed. The mail-lab suite points both at the lab's real provider.
  GOOGLE_OAUTH_CLIENT_ID: "deployment-google-app",
  GOOGLE_OAUTH_CLIENT_SECRET: "deployment-google-secret",
  GOOGLE_OAUTH_TOKEN_URL: "https://oauth.invalid/token",
};

/** Access-log lines would drown the test report; errors and warnings still show. */
export const quietAccessLog = (log: string) => !log.includes('"message":"request"');

/**
 * The Workers AI binding `AI` for the Workers-runtime suites: Workers AI runs only on Cloudflare, so
 * a test-only service binding to an RPC entrypoint stands in for it at the edge
 * (test/triage/fake-workers-ai.mjs: called as `env.AI.run(model, inputs)`, the documented request
 * checked, the documented response answered). The suites categorise replies with it
 * (CATEGORISER=workers-ai), so the whole path from ingestion to category runs as deployed.
 */
export const fakeWorkersAi = {
  workers: [
    {
      name: "fake-workers-ai",
      modules: [
        { type: "ESModule" as const, path: "./test/triage/fake-workers-ai.mjs" },
        { type: "ESModule" as const, path: "./test/triage/fake-model.mjs" },
      ],
      compatibilityDate: "2026-10-20",
    },
  ],
  serviceBindings: { AI: { name: "fake-workers-ai", entrypoint: "FakeWorkersAi" } },
  categoriser: { CATEGORISER: "workers-ai", CATEGORISER_MODEL: "@cf/meta/llama-3.2-3b-instruct" },
};
