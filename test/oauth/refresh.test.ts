import { afterEach, describe, expect, it, vi } from "vitest";
import { eq } from "drizzle-orm";
import { senderStub } from "../../src/mailbox-agent/stub";
import { runConnectionCheck, type ConnectionChecker } from "../../src/mailboxes/connection-check";
import type { Bindings } from "../../src/platform/env";
import { mailboxRow, schema, testDb } from "../db";
import { storedRefreshToken } from "../../src/mailboxes/store";
import { config } from "../../src/config";
import { loadKeyring } from "../../src/platform/crypto";
import { callJson, fileEnv, provisionAccount } from "../helpers";

/**
 * How a mailbox's object takes its provider's answer to a refresh (CONTRACT 18.5): only the table's
 * refusals disconnect it. The provider's token endpoint (the deployment's, https://oauth.invalid/token
 * here) answers as Google's and Microsoft's document; the lab's OAuth server plays the rest (test/mail/oauth.test.ts).
 */

const bindings = fileEnv() as unknown as Bindings;

/** The provider's token endpoint answers `answer`; every other request goes out as it would. */
function tokenEndpoint(answer: () => Response | Promise<Response>) {
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const request = new Request(input, init);
    return new URL(request.url).hostname === "oauth.invalid" ? answer() : realFetch(input, init);
  });
}

async function saveOAuth(apiKey: string, email = `ann-${crypto.randomUUID().slice(0, 8)}@acme.example`, refreshToken = "r1") {
  const saved = await callJson<{ id: number }>("/api/v1/email-accounts/save-oauth", {
    method: "POST",
    apiKey,
    body: { from_name: "Ann", from_email: email, username: email, type: "GMAIL", token: { refresh_token: refreshToken, expiry_date: 0, scope: "https://mail.google.com/" } },
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

describe("a disconnected OAuth mailbox and its connection check", () => {
  it("is checked with a token when a server refused it (SMTP AUTH turned off, since fixed), and the passing check ends the disconnect; a revoked grant gets none", async () => {
    const { apiKey } = await provisionAccount();
    const disconnect = (id: number, code: string) =>
      testDb().update(schema.emailAccounts).set({ isSmtpSuccess: false, isImapSuccess: true, smtpFailureError: "refused", disconnectCode: code, disconnectMessage: "refused", disconnectedAt: new Date() }).where(eq(schema.emailAccounts.id, id));
    tokenEndpoint(() => Response.json({ access_token: "fresh-access", expires_in: 3600 }));
    // The servers as the deployment's checker meets them once the admin turned SMTP AUTH on: a side with no credential is not checked.
    const checkedWith: unknown[] = [];
    const servers: ConnectionChecker = async ({ smtp, imap }) => {
      checkedWith.push({ smtp: smtp.credential, imap: imap.credential });
      const side = (credential: unknown) => (credential === null ? { ok: null, error: null } : { ok: true, error: null });
      return { smtp: side(smtp.credential), imap: side(imap.credential) } as Awaited<ReturnType<ConnectionChecker>>;
    };

    const fixed = await saveOAuth(apiKey);
    await disconnect(fixed, "smtp_auth_disabled");
    await runConnectionCheck(bindings, await mailboxRow(fixed), {}, servers);
    expect(checkedWith).toEqual([{ smtp: { accessToken: "fresh-access" }, imap: { accessToken: "fresh-access" } }]);
    expect(await mailboxRow(fixed)).toMatchObject({ disconnectCode: null, isSmtpSuccess: true });

    const revoked = await saveOAuth(apiKey);
    await disconnect(revoked, "oauth_grant_revoked");
    await runConnectionCheck(bindings, await mailboxRow(revoked), {}, servers);
    expect(checkedWith[1], "no token for a revoked grant: nothing to check with").toEqual({ smtp: null, imap: null });
    expect((await mailboxRow(revoked)).disconnectCode).toBe("oauth_grant_revoked");
  });
});

describe("a refresh in flight while the mailbox is connected again", () => {
  it("neither disconnects the mailbox with the old grant's refusal nor replaces the new grant with the old one's rotated token", async () => {
    const { apiKey } = await provisionAccount();
    const keyring = await loadKeyring(config(bindings).secretsKey);
    for (const answer of [
      () => Response.json({ error: "invalid_grant", error_description: "Token has been expired or revoked." }, { status: 400 }),
      () => Response.json({ access_token: "old-access", expires_in: 3600, refresh_token: "old-grant-rotated" }),
    ]) {
      const email = `cat-${crypto.randomUUID().slice(0, 8)}@acme.example`;
      const id = await saveOAuth(apiKey, email, "old-grant");
      let release!: () => void;
      const held = new Promise<void>((resolve) => (release = resolve));
      tokenEndpoint(async () => {
        await held;
        return answer();
      });
      const inFlight = senderStub(bindings, id).accessToken(id);
      await new Promise((resolve) => setTimeout(resolve, 50));
      // The person connects the mailbox again while the old grant's refresh waits for the provider.
      await saveOAuth(apiKey, email, "new-grant");
      release();
      expect((await inFlight).ok).toBe(false);
      vi.restoreAllMocks();
      const row = await mailboxRow(id);
      expect({ code: row.disconnectCode, refreshToken: await storedRefreshToken(keyring, row) }).toEqual({ code: null, refreshToken: "new-grant" });
    }
  });
});
