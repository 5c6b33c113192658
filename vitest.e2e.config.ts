import { defineConfig } from "vitest/config";

/**
 * End-to-end suite: runs in Node against a real `npm run dev` instance (own port, own state),
 * for what only a running server shows: the docs page in Chromium, the OpenAPI document as
 * served, and the typed client over HTTP.
 */
export default defineConfig({
  test: {
    include: ["test/e2e/**/*.e2e.ts"],
    environment: "node",
    globalSetup: ["test/e2e/global-setup.ts"],
    testTimeout: 60_000,
    hookTimeout: 180_000,
  },
});
