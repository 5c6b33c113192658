import { defineConfig } from "vitest/config";

/**
 * The web app against the real mail lab, in Chromium (issue 29's lab flow): run by `npm run test:mail`
 * under scripts/with-mail-lab.mjs, with a dev server of its own that knows the lab.
 */
export default defineConfig({
  test: {
    include: ["test/web-mail/**/*.e2e.ts"],
    environment: "node",
    globalSetup: ["test/web-mail/global-setup.ts"],
    testTimeout: 90_000,
    hookTimeout: 180_000,
  },
});
