import { describe, expect, inject, it } from "vitest";
import { checkLink, checkLinks } from "../../src/deliverability/link-checker";

const stub = inject("linkStub");

describe("the link checker against a stub of the public web", () => {
  it("follows redirects one hop at a time, falls back to GET when HEAD is refused, and reports failures", async () => {
    const report = await checkLinks([`${stub}/ok`, `${stub}/no-head`, `${stub}/moved`, `${stub}/gone`, `${stub}/loop`], { maxRedirects: 3 });
    expect(report).toEqual([
      { url: `${stub}/ok`, status: 200, final_url: `${stub}/ok`, redirects: 0, ok: true },
      { url: `${stub}/no-head`, status: 200, final_url: `${stub}/no-head`, redirects: 0, ok: true },
      { url: `${stub}/moved`, status: 200, final_url: `${stub}/ok`, redirects: 2, ok: true },
      { url: `${stub}/gone`, status: 404, final_url: `${stub}/gone`, redirects: 0, ok: false, error: "HTTP 404" },
      { url: `${stub}/loop`, status: 302, final_url: `${stub}/loop`, redirects: 3, ok: false, error: "more than 3 redirects" },
    ]);
    const methods = (await (await fetch(`${stub}/methods`)).json()) as string[];
    expect(methods.filter((m) => m.endsWith(" /no-head"))).toEqual(["HEAD /no-head", "GET /no-head"]);
    expect(methods.filter((m) => m.endsWith(" /ok")).every((m) => m.startsWith("HEAD"))).toBe(true);
  });

  it("gives up on a link that never answers after its timeout", async () => {
    const started = Date.now();
    const result = await checkLink(`${stub}/slow`, { timeoutMs: 300 });
    expect(result).toMatchObject({ url: `${stub}/slow`, status: null, ok: false, error: "timed out after 300 ms" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
