import { describe, expect, it } from "vitest";
import { hostOf, urlProblem, type OutboundPolicy } from "../src/platform/outbound";
import { WEBHOOK_URL_RULES } from "../src/webhooks/delivery-rules";
import { callJson, provisionAccount } from "./helpers";
import { createCampaign } from "./campaigns/fixtures";

/** The webhook rules by spelling alone (the lookups have their own tests: test/webhooks/outbound-rule.test.ts). */
const production: OutboundPolicy = { local: "none", resolverUrl: null, ownHosts: ["salvo.test"] };
const development: OutboundPolicy = { ...production, local: "loopback" };
const webhookUrlProblem = (url: string, allowInsecure: boolean) => urlProblem(url, allowInsecure ? development : production, WEBHOOK_URL_RULES);

describe("webhook hosts are normalised before the rules", () => {
  it("lower-cases, strips one trailing dot and reads IDNA through the URL parser", () => {
    expect(hostOf(new URL("https://LOCALHOST./x").hostname)?.text).toBe("localhost");
    expect(hostOf(new URL("https://Hooks.Example.COM./x").hostname)?.text).toBe("hooks.example.com");
    // Full-width letters are folded by IDNA processing into plain ASCII.
    expect(hostOf(new URL("https://ｌｏｃａｌｈｏｓｔ/x").hostname)?.text).toBe("localhost");
  });
});

describe("webhook URL bypasses found in the issue", () => {
  const refused = [
    "https://localhost./hook",
    "https://foo.localhost./hook",
    "https://FOO.LOCALHOST/hook",
    "https://metadata.google.internal./computeMetadata/v1/",
    "https://metadata.google.internal/computeMetadata/v1/",
    "https://printer.local./hook",
    "https://nas.lan/hook",
    "https://nas.lan./hook",
    "https://git.corp/hook",
    "https://router.home.arpa/hook",
    "https://router.home/hook",
    "https://wiki.intranet/hook",
    "https://db.private/hook",
    "https://kubernetes.default.svc/hook",
    "https://ｌｏｃａｌｈｏｓｔ/hook",
    "https://intranet./hook",
    "https://hooks.example.com:8443/hook",
    "https://hooks.example.com:22/hook",
    "https://hooks.example.com:80/hook",
    "https://[::ffff:127.0.0.1]/hook",
    "https://0x7f.1/hook",
    "https://127.1/hook",
    "https://salvo.test/api/v1/campaigns",
    "http://hooks.example.com",
    "https://10.0.0.1",
    "https://[::1]",
    "https://2130706433",
    "https://a:b@x.example",
    "https://localhost",
    "https://intranet",
    "https://svc.internal",
    "ftp://x.example",
  ];
  it.each(refused)("refuses %s", (url) => {
    expect(webhookUrlProblem(url, false)).not.toBeNull();
  });

  it("names the reason: port, public host, IP, Salvo itself", () => {
    expect(webhookUrlProblem("https://hooks.example.com:8443/x", false)).toBe("must use the default https port (443)");
    expect(webhookUrlProblem("https://localhost./x", false)).toBe("must name a public host (localhost is a loopback name)");
    expect(webhookUrlProblem("https://nas.lan/x", false)).toBe("must name a public host (nas.lan is a private or special-use name (.lan))");
    expect(webhookUrlProblem("https://0x7f.1/x", false)).toBe("must name a host, not an IP address");
    expect(webhookUrlProblem("https://salvo.test/x", false)).toBe("must not point to Salvo itself");
  });

  it("still accepts public hosts, the explicit default port and a trailing dot on a public name", () => {
    for (const url of ["https://hooks.example.com/x", "https://hooks.example.com/path?x=1", "https://hooks.example.com:443/x", "https://hooks.example.com./x", "https://xn--bcher-kva.example/x", "https://bücher.example/x"]) {
      expect(webhookUrlProblem(url, false), url).toBeNull();
    }
  });

  it("admits http, other ports and loopback only when insecure webhooks are allowed (local development)", () => {
    expect(webhookUrlProblem("https://hooks.example.com:8443/x", true)).toBeNull();
    expect(webhookUrlProblem("http://foo.localhost.:8790/x", true)).toBeNull();
    expect(webhookUrlProblem("http://127.0.0.1:8790/hook", true)).toBeNull();
    expect(webhookUrlProblem("http://localhost:8790/hook", true)).toBeNull();
    expect(webhookUrlProblem("http://hooks.example.com/hook", true)).toBeNull();
    expect(webhookUrlProblem("http://127.0.0.1:8790/hook", false)).not.toBeNull();
    expect(webhookUrlProblem("https://printer.local./x", true)).not.toBeNull();
    expect(webhookUrlProblem("https://10.1.2.3/hook", true)).not.toBeNull();
  });

  it("refuses them at the route with the validation error", async () => {
    const account = await provisionAccount();
    const campaign = await createCampaign(account.apiKey);
    for (const webhook_url of ["https://localhost./hook", "https://printer.local./hook", "https://hooks.example.com:8443/hook"]) {
      const { status, body } = await callJson(`/api/v1/campaigns/${campaign}/webhooks`, {
        method: "POST",
        apiKey: account.apiKey,
        body: { webhook_name: "x", webhook_url, event_types: ["EMAIL_SENT"] },
      });
      expect(status, webhook_url).toBe(422);
      expect(JSON.stringify(body)).toContain("webhook_url");
    }
  });
});
