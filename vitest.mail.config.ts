import { cloudflareTest } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";

/**
 * Workers-runtime tests against the real mail lab (`npm run test:mail`, which starts the lab and sets
 * NODE_EXTRA_CA_CERTS so workerd trusts the lab's CA). Kept apart from `npm test`: these need Postfix
 * and Dovecot on the machine.
 */
export default defineConfig({
  plugins: [cloudflareTest({ wrangler: { configPath: "./wrangler.toml" } })],
  test: {
    include: ["test/mail/**/*.test.ts"],
    globalSetup: ["./test/mail/lab.global.ts"],
    testTimeout: 30_000,
  },
});
