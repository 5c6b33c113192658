/** The key the fake OpenAI-compatible endpoint wants as a bearer token (test/triage/openai-server.global.ts). */
export const FAKE_OPENAI_KEY = "sk-test-fake-openai-key";
