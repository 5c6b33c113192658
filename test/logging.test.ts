import { afterEach, describe, expect, it, vi } from "vitest";
import { call, provisionAccount } from "./helpers";

afterEach(() => vi.restoreAllMocks());

describe("structured access log", () => {
  it("writes one JSON line per request with the request id, and never the API key", async () => {
    const account = await provisionAccount();
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(line));
    await call("/api/v1/account", { apiKey: account.apiKey, headers: { "X-Request-Id": "log-test-1" } });
    const entries = lines.map((line) => JSON.parse(line) as Record<string, unknown>);
    const entry = entries.find((e) => e.request_id === "log-test-1");
    expect(entry).toMatchObject({
      level: "info",
      message: "request",
      method: "GET",
      path: "/api/v1/account",
      status: 200,
      account_id: account.id,
    });
    expect(typeof entry!.duration_ms).toBe("number");
    expect(lines.join("\n")).not.toContain(account.apiKey);
  });
});
