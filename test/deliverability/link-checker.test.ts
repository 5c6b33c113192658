import { describe, expect, inject, it } from "vitest";
import { config } from "../../src/config";
import { checkLink, checkLinks } from "../../src/deliverability/link-checker";
import { urlPolicy } from "../../src/platform/outbound";
import { fileEnv, env } from "../helpers";

const stub = inject("linkStub");
/** The stub sits on 127.0.0.1: only the development switch lets the checker reach it. */
const policy = urlPolicy(config({ ...env, ALLOW_INSECURE_WEBHOOKS: "true" }));

describe("the link checker against a stub of the public web", () => {
  it("follows redirects one hop at a time, falls back to GET when HEAD is refused, and reports failures", async () => {
    const report = await checkLinks([`${stub}/ok`, `${stub}/no-head`, `${stub}/moved`, `${stub}/gone`, `${stub}/loop`], { policy, maxRedirects: 3 });
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

  it("reports a redirect to an unparseable Location as a failed link, not a crash", async () => {
    const result = await checkLink(`${stub}/broken-redirect`, { policy });
    expect(result).toEqual({ url: `${stub}/broken-redirect`, status: 302, final_url: `${stub}/broken-redirect`, redirects: 0, ok: false, error: "a redirect to an invalid URL" });
  });

  it("gives up on a link that never answers after its timeout", async () => {
    const started = Date.now();
    const result = await checkLink(`${stub}/slow`, { policy, timeoutMs: 300 });
    expect(result).toMatchObject({ url: `${stub}/slow`, status: null, ok: false, error: "timed out after 300 ms" });
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it("follows no link to a private or loopback address, nor a redirect to one (issue 23)", async () => {
    const production = urlPolicy(config(fileEnv()));
    const before = ((await (await fetch(`${stub}/methods`)).json()) as string[]).length;
    const report = await checkLinks([`${stub}/ok`, "http://169.254.169.254/latest/meta-data/", "https://localtest.me/", "http://printer.lan/"], { policy: production });
    expect(report.map((r) => [r.url, r.ok, r.status, r.error])).toEqual([
      [`${stub}/ok`, false, null, expect.stringContaining("127.0.0.1 is a loopback address")],
      ["http://169.254.169.254/latest/meta-data/", false, null, expect.stringContaining("169.254.169.254 is a link-local address")],
      ["https://localtest.me/", false, null, expect.stringContaining("localtest.me resolves to 127.0.0.1")],
      ["http://printer.lan/", false, null, expect.stringContaining("printer.lan is a private or special-use name (.lan)")],
    ]);
    expect(((await (await fetch(`${stub}/methods`)).json()) as string[]).length).toBe(before);
  });
});
