import js from "@eslint/js";
import tseslint from "typescript-eslint";

export default tseslint.config(
  { ignores: ["node_modules/", ".wrangler/", "public/", "migrations/", "bench/data/", "test-results/", "src/client/schema.ts", "packages/client/dist/", "worker-configuration.d.ts"] },
  js.configs.recommended,
  ...tseslint.configs.recommended,
  {
    files: ["scripts/**/*.mjs"],
    languageOptions: {
      globals: {
        console: "readonly",
        process: "readonly",
        URL: "readonly",
        URLSearchParams: "readonly",
        fetch: "readonly",
        performance: "readonly",
        setTimeout: "readonly",
        clearTimeout: "readonly",
        Buffer: "readonly",
      },
    },
  },
  {
    // Bytes become text in one place only (src/platform/bytes.ts).
    files: ["src/**/*.ts"],
    ignores: ["src/platform/bytes.ts"],
    rules: {
      "no-restricted-globals": [
        "error",
        { name: "btoa", message: "Use toBase64/utf8Base64 from src/platform/bytes.ts." },
        { name: "atob", message: "Use fromBase64 from src/platform/bytes.ts." },
      ],
    },
  },
  {
    rules: {
      "@typescript-eslint/no-unused-vars": ["error", { argsIgnorePattern: "^_" }],
      "@typescript-eslint/consistent-type-imports": "error",
    },
  },
);
