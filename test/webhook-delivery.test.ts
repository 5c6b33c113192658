import { describe, expect, it } from "vitest";
import { judge, newWebhookSecret, RETRY_SCHEDULE_SECONDS, ROTATION_OVERLAP_MS, signatureHeader, signingSecrets } from "../src/webhooks/delivery-rules";

const NOW = Date.parse("2026-11-22T12:00:00Z");

describe("judging a receiver's answer", () => {
  it("retries on the contract's schedule: 30 s, 2 m, 10 m, 1 h, 6 h, 12 h", () => {
    expect(RETRY_SCHEDULE_SECONDS).toEqual([30, 120, 600, 3600, 21_600, 43_200]);
    for (let attempt = 1; attempt <= 6; attempt += 1) {
      expect(judge({ status: 503, retryAfter: null }, attempt, NOW)).toEqual({ outcome: "retry", delaySeconds: RETRY_SCHEDULE_SECONDS[attempt - 1] });
    }
    expect(judge(null, 1, NOW)).toEqual({ outcome: "retry", delaySeconds: 30 });
  });

  it("honours Retry-After in seconds or as a date, capped at 12 hours", () => {
    expect(judge({ status: 429, retryAfter: "5" }, 1, NOW)).toEqual({ outcome: "retry", delaySeconds: 5 });
    expect(judge({ status: 503, retryAfter: "Sun, 22 Nov 2026 12:10:00 GMT" }, 1, NOW)).toEqual({ outcome: "retry", delaySeconds: 600 });
    expect(judge({ status: 503, retryAfter: "999999" }, 1, NOW)).toEqual({ outcome: "retry", delaySeconds: 43_200 });
    expect(judge({ status: 503, retryAfter: "soon" }, 2, NOW)).toEqual({ outcome: "retry", delaySeconds: 120 });
  });

  it("classifies every answer", () => {
    const outcome = (status: number) => judge({ status, retryAfter: null }, 1, NOW).outcome;
    expect([200, 201, 204, 299].map(outcome)).toEqual(["delivered", "delivered", "delivered", "delivered"]);
    expect(outcome(410)).toBe("disabled");
    expect([400, 401, 403, 404, 422, 301, 302].map(outcome)).toEqual(Array(7).fill("failed"));
    expect([408, 429, 500, 502, 503, 504].map(outcome)).toEqual(Array(6).fill("retry"));
  });
});

/** Which of the header's `v1,` signatures the secret verifies (Standard Webhooks, from the specification). */
async function verifiedBy(secret: string, header: string, id: string, timestamp: number, body: string): Promise<number[]> {
  const key = await crypto.subtle.importKey("raw", Uint8Array.from(atob(secret.slice("whsec_".length)), (c) => c.charCodeAt(0)), { name: "HMAC", hash: "SHA-256" }, false, ["verify"]);
  const hits: number[] = [];
  for (const [index, candidate] of header.split(" ").entries()) {
    const [version, mac] = candidate.split(",");
    const bytes = Uint8Array.from(atob(mac!), (c) => c.charCodeAt(0));
    if (version === "v1" && (await crypto.subtle.verify("HMAC", key, bytes, new TextEncoder().encode(`${id}.${timestamp}.${body}`)))) hits.push(index);
  }
  return hits;
}

describe("signing headers", () => {
  const body = '{"event_type":"EMAIL_SENT"}';

  it("signs id.timestamp.body once per secret, space-separated, in the order given", async () => {
    const [current, previous] = [newWebhookSecret(), newWebhookSecret()];
    const one = await signatureHeader([current], "msg_1", 1_700_000_000, body);
    expect(one).toMatch(/^v1,[A-Za-z0-9+/]{43}=$/);
    expect(await verifiedBy(current, one, "msg_1", 1_700_000_000, body)).toEqual([0]);
    expect(await verifiedBy(current, one, "msg_2", 1_700_000_000, body)).toEqual([]);
    expect(await verifiedBy(current, one, "msg_1", 1_700_000_001, body)).toEqual([]);

    const both = await signatureHeader([current, previous], "msg_1", 1_700_000_000, body);
    expect(both.split(" ")).toHaveLength(2);
    expect(await verifiedBy(current, both, "msg_1", 1_700_000_000, body)).toEqual([0]);
    expect(await verifiedBy(previous, both, "msg_1", 1_700_000_000, body)).toEqual([1]);
    await expect(signatureHeader([], "msg_1", 1, body)).rejects.toThrow();
  });

  it("keeps the previous secret signing until its expiry, and only the current one after", () => {
    const previous = { secret: "whsec_old", expiresAt: NOW + ROTATION_OVERLAP_MS };
    expect(ROTATION_OVERLAP_MS).toBe(24 * 3600 * 1000);
    expect(signingSecrets("whsec_new", previous, NOW)).toEqual(["whsec_new", "whsec_old"]);
    expect(signingSecrets("whsec_new", previous, previous.expiresAt - 1)).toEqual(["whsec_new", "whsec_old"]);
    expect(signingSecrets("whsec_new", previous, previous.expiresAt)).toEqual(["whsec_new"]);
    expect(signingSecrets("whsec_new", null, NOW)).toEqual(["whsec_new"]);
  });
});
