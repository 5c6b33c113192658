import { defineConfig } from "vitest/config";

/**
 * Node-side suite: the operator's tools, run as an operator runs them (the deploy script with a
 * stand-in for wrangler's Cloudflare calls, the client package built and imported).
 */
export default defineConfig({
  test: {
    include: ["test/node/**/*.test.ts"],
    environment: "node",
    testTimeout: 120_000,
  },
});
