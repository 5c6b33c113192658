import { afterEach, describe, expect, it, vi } from "vitest";
import { senderStub } from "../../src/mailbox-agent/stub";
import type { Bindings } from "../../src/platform/env";
import { mailboxRow } from "../db";
import { callJson, fileEnv, provisionAccount } from "../helpers";

/**
 * How a mailbox's object takes its provider's answer to a refresh (CONTRACT 18.5): only the table's
 * refusals disconnect it. The provider's token endpoint (the deployment's, https://oauth.invalid/token
 * here) answers as Google's and Microsoft's document; the lab's OAuth server plays the rest (test/mail/oauth.test.ts).
 */

const bindings = fileEnv() as unknown as Bindings;

/** The provider's token endpoint answers `answer`; every other request goes out as it would. */
function tokenEndpoint(answer: () => Response) {
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    return new URL(request.url).hostname === "oauth.invalid" ? answer() : realFetch(input, init);
  });
}

async function saveOAuth(apiKey: string) {
  const email = `ann-${crypto.randomUUID().slice(0, 8)}@acme.example`;
  const saved = await callJson<{ id: number }>("/api/v1/email-accounts/save-oauth", {
    method: "POST",
    apiKey,
    body: { from_name: "Ann", from_email: email, username: email, type: "GMAIL", token: { refresh_token: "r1", expiry_date: 0, scope: "https://mail.google.com/" } },
  });
  expect(saved.status).toBe(200);
  return saved.body.id;
}

afterEach(() => vi.restoreAllMocks());

describe("a refused token refresh", () => {
  it("leaves the mailbox connected when the provider throttles it or finds the request bad (a passing fault, retried); invalid_grant disconnects it", async () => {
    const { apiKey } = await provisionAccount();
    const cases = [
      { answer: { error: "temporarily_unavailable", error_description: "throttled, retry later" }, status: 429, kind: "unavailable", code: null },
      { answer: { error: "invalid_request", error_description: "malformed" }, status: 400, kind: "unavailable", code: null },
      { answer: { error: "invalid_grant", error_description: "Token has been expired or revoked." }, status: 400, kind: "disconnected", code: "oauth_grant_revoked" },
    ];
    for (const { answer, status, kind, code } of cases) {
      const id = await saveOAuth(apiKey);
      tokenEndpoint(() => Response.json(answer, { status }));
      const result = await senderStub(bindings, id).accessToken(id);
      vi.restoreAllMocks();
      const row = await mailboxRow(id);
      expect({ kind: result.ok ? "ok" : result.kind, code: row.disconnectCode }, answer.error).toEqual({ kind, code });
    }
  });
});
