import { defineConfig } from "vitest/config";

/**
 * Node-side suite: the operator's tools, run as an operator runs them (the deploy script with a
 * stand-in for wrangler's Cloudflare calls, the client package built and imported), and the mail
 * lab's own promises with labs of their own (root and the lab's Debian packages needed).
 */
export default defineConfig({
  test: {
    include: ["test/node/**/*.test.ts"],
    environment: "node",
    testTimeout: 120_000,
  },
});
