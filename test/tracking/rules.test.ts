import { describe, expect, it } from "vitest";
import { config, ConfigError } from "../../src/config";
import { loadKeyring } from "../../src/platform/crypto";
import { classifyHit, SCANNER_WINDOW_MS } from "../../src/tracking/machine";
import { trackedHtml, trackingBaseUrl, unsubscribeUrl } from "../../src/tracking/links";
import { writeGroups } from "../../src/tracking/queue-message";
import { signToken, verifyToken, type TrackPayload } from "../../src/tracking/tokens";

function key(fill: number): string {
  return btoa(String.fromCharCode(...new Uint8Array(32).fill(fill)));
}

const OLD = `old:${key(1)}`;
const NEW = `new:${key(2)}`;
const SENT = Date.parse("2026-11-20T09:30:00.000Z");

const open: TrackPayload = { kind: "open", recordId: 4812, step: 2, mailboxId: 17, sentAt: SENT };
const click: TrackPayload = { kind: "click", recordId: 4812, step: 2, mailboxId: null, sentAt: SENT, url: "https://example.com/a.b/c?x=1&y=ü#top" };
const unsubscribe: TrackPayload = { kind: "unsubscribe", recordId: 1, step: 1, mailboxId: 3, sentAt: SENT };

/** Flips one bit of the token's character at `at`, keeping it base64url. */
function flip(token: string, at: number): string {
  const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_";
  const index = alphabet.indexOf(token[at]!);
  return token.slice(0, at) + alphabet[index ^ 1] + token.slice(at + 1);
}

describe("tracking tokens", () => {
  it("round-trips every kind, URL-safe and compact, with no bare id in it", async () => {
    const keyring = await loadKeyring(OLD);
    for (const payload of [open, click, unsubscribe]) {
      const token = await signToken(keyring, payload);
      expect(token).toMatch(/^[A-Za-z0-9_-]+\.[A-Za-z0-9_-]{22}$/);
      expect(await verifyToken(keyring, token)).toEqual(payload);
    }
    const pixel = await signToken(keyring, open);
    expect(pixel.length).toBeLessThan(60);
    expect(pixel).not.toContain("4812");
  });

  it("refuses altered, forged, truncated and malformed tokens", async () => {
    const keyring = await loadKeyring(OLD);
    const token = await signToken(keyring, open);
    const [body, mac] = token.split(".") as [string, string];
    const other = await signToken(keyring, { ...open, recordId: 4813 });
    const refused = [
      flip(token, 0),
      flip(token, body.length - 1),
      flip(token, token.length - 1),
      `${body}.${other.split(".")[1]}`,
      `${other.split(".")[0]}.${mac}`,
      `${body}.${mac.slice(0, -2)}`,
      body,
      `${token}.x`,
      "",
      "....",
      `${btoa("o.1.1..1").replace(/=+$/, "")}.${mac}`,
      "not a token at all",
    ];
    for (const candidate of refused) expect(await verifyToken(keyring, candidate), candidate).toBeNull();
  });

  it("refuses a token signed under a key the ring does not hold", async () => {
    const token = await signToken(await loadKeyring(NEW), click);
    expect(await verifyToken(await loadKeyring(OLD), token)).toBeNull();
  });

  it("keeps old emails' links working across a key rotation, and signs with the new key", async () => {
    const before = await signToken(await loadKeyring(OLD), click);
    const during = await loadKeyring(`${NEW},${OLD}`);
    expect(await verifyToken(during, before)).toEqual(click);
    const fresh = await signToken(during, click);
    expect(await verifyToken(await loadKeyring(NEW), fresh)).toEqual(click);
    expect(await verifyToken(await loadKeyring(OLD), fresh)).toBeNull();
  });

  it("derives its own key: a token is not an HMAC under the raw secrets key", async () => {
    const token = await signToken(await loadKeyring(OLD), open);
    const [body, mac] = token.split(".") as [string, string];
    const raw = await crypto.subtle.importKey("raw", new Uint8Array(32).fill(1), { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
    const direct = new Uint8Array(await crypto.subtle.sign("HMAC", raw, new TextEncoder().encode(body)), 0, 16);
    const directText = btoa(String.fromCharCode(...direct)).replace(/\+/g, "-").replace(/\//g, "_").replace(/=+$/, "");
    expect(mac).not.toBe(directText);
  });

  it("will not sign a click without an http(s) URL", async () => {
    const keyring = await loadKeyring(OLD);
    await expect(signToken(keyring, { ...click, url: "javascript:alert(1)" })).rejects.toThrow(RangeError);
    await expect(signToken(keyring, { ...click, url: undefined })).rejects.toThrow(RangeError);
  });
});

describe("machine classification", () => {
  const LATER = SENT + 5 * 60_000;
  const SAFARI = "Mozilla/5.0 (Macintosh; Intel Mac OS X 10_15_7) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/17.0 Safari/605.1.15";
  const CHROME = "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/131.0.0.0 Safari/537.36";
  const cases: [string, { method?: string; userAgent: string | null; now?: number }, string | null][] = [
    ["a person in Safari", { userAgent: SAFARI }, null],
    ["a person in Chrome", { userAgent: CHROME }, null],
    ["Outlook desktop", { userAgent: "Microsoft Office/16.0 (Windows NT 10.0; Microsoft Outlook 16.0.17928; Pro)" }, null],
    ["Gmail's image proxy (loads on open)", { userAgent: "Mozilla/5.0 (Windows NT 5.1; rv:11.0) Gecko Firefox/11.0 (via ggpht.com GoogleImageProxy)" }, null],
    ["Yahoo's image proxy (loads on open)", { userAgent: "YahooMailProxy; https://help.yahoo.com/kb/yahoo-mail-proxy-SLN28749.html" }, null],
    ["a HEAD request", { method: "HEAD", userAgent: SAFARI }, "head-request"],
    ["no user agent", { userAgent: null }, "no-user-agent"],
    ["a blank user agent", { userAgent: "  " }, "no-user-agent"],
    ["Apple Mail Privacy Protection", { userAgent: "Mozilla/5.0" }, "apple-mail-privacy-protection"],
    [
      "Gmail's session prefetch",
      { userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/42.0.2311.135 Safari/537.36 Edge/12.246 Mozilla/5.0" },
      "gmail-prefetch",
    ],
    ["Safe Links", { userAgent: "Mozilla/5.0 (Windows NT; Microsoft Office SafeLinks)" }, "microsoft-link-scanner"],
    ["Bing preview", { userAgent: "Mozilla/5.0 (Windows NT 10.0; Win64; x64) BingPreview/1.0b" }, "microsoft-link-scanner"],
    ["Proofpoint", { userAgent: "Proofpoint URL Defense" }, "proofpoint"],
    ["Mimecast", { userAgent: "Mozilla/5.0 Mimecast-URL-Protect" }, "mimecast"],
    ["Barracuda", { userAgent: "Barracuda Sentinel (EE)" }, "barracuda"],
    ["a crawler", { userAgent: "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" }, "bot"],
    ["a link preview", { userAgent: "Slackbot-LinkExpanding 1.0 (+https://api.slack.com/robots)" }, "bot"],
    ["headless Chrome", { userAgent: "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 HeadlessChrome/120.0.0.0 Safari/537.36" }, "bot"],
    ["curl", { userAgent: "curl/8.5.0" }, "http-library"],
    ["python-requests", { userAgent: "python-requests/2.31.0" }, "http-library"],
    ["a browser 3 s after the send", { userAgent: CHROME, now: SENT + 3_000 }, "within-seconds-of-send"],
    ["a browser just inside the window", { userAgent: CHROME, now: SENT + SCANNER_WINDOW_MS - 1 }, "within-seconds-of-send"],
    ["a browser at the window's end", { userAgent: CHROME, now: SENT + SCANNER_WINDOW_MS }, null],
  ];
  it.each(cases)("%s", (_, hit, reason) => {
    const verdict = classifyHit({ method: hit.method ?? "GET", userAgent: hit.userAgent, now: hit.now ?? LATER, sentAt: SENT });
    expect(verdict).toEqual(reason === null ? { machine: false } : { machine: true, reason });
  });
});

describe("tracked links", () => {
  const base = "https://track.example.com";
  const tokenFor = async (url: string) => `T(${encodeURIComponent(url)})`;

  it("uses the mailbox's custom tracking domain, else the public URL", () => {
    expect(trackingBaseUrl("https://salvo.test", "links.acme.example")).toBe("https://links.acme.example");
    expect(trackingBaseUrl("https://salvo.test", null)).toBe("https://salvo.test");
    expect(trackingBaseUrl("https://salvo.test", "")).toBe("https://salvo.test");
    expect(unsubscribeUrl(base, "abc.def")).toBe("https://track.example.com/u/abc.def");
  });

  it("rewrites http(s) links only, and puts the pixel before </body>", async () => {
    const html = `<html><body><p>Hi <a href="https://acme.example/pricing?a=1&amp;b=2" class="x">pricing</a>,
      <a href='http://acme.example/'>home</a> <a href="mailto:me@acme.example">mail</a> <a href="#top">top</a>
      <a href="${base}/u/unsub.tok">Unsubscribe</a> <a name="anchor">no href</a> <a href="tel:+1555">call</a></p>
      <!-- <a href="https://in.comment.example">x</a> --></body></html>`;
    const out = await trackedHtml(html, { base, open: "open.tok", click: tokenFor });
    expect(out).toContain(`<a href="${base}/t/c/T(${encodeURIComponent("https://acme.example/pricing?a=1&b=2")})" class="x">pricing</a>`);
    expect(out).toContain(`<a href="${base}/t/c/T(${encodeURIComponent("http://acme.example/")})">home</a>`);
    expect(out).toContain(`<a href="mailto:me@acme.example">mail</a>`);
    expect(out).toContain(`<a href="#top">top</a>`);
    expect(out).toContain(`<a href="${base}/u/unsub.tok">Unsubscribe</a>`);
    expect(out).toContain(`<a href="tel:+1555">call</a>`);
    expect(out).toContain(`<!-- <a href="https://in.comment.example">x</a> -->`);
    expect(out).toMatch(new RegExp(`<img src="${base}/t/o/open\\.tok\\.gif" width="1" height="1" alt=""[^>]*/></body></html>$`));
    expect(out.match(/<img /g)).toHaveLength(1);
  });

  it("appends the pixel at the end of a fragment without <body>", async () => {
    const out = await trackedHtml(`<p>Hello <a href="https://acme.example">there</a></p>`, { base, open: "o", click: null });
    expect(out).toMatch(/^<p>Hello <a href="https:\/\/acme\.example">there<\/a><\/p><img src="https:\/\/track\.example\.com\/t\/o\/o\.gif"/);
  });

  it("changes nothing when neither opens nor clicks are tracked", async () => {
    const html = `<body><a href="https://acme.example">x</a></body>`;
    expect(await trackedHtml(html, { base, open: null, click: null })).toBe(html);
  });
});

describe("PUBLIC_URL", () => {
  it("is an origin without a trailing slash, wrangler dev's by default", () => {
    expect(config({}).publicUrl).toBe("http://127.0.0.1:8787");
    expect(config({ PUBLIC_URL: "https://salvo.example.com/" }).publicUrl).toBe("https://salvo.example.com");
    expect(config({ PUBLIC_URL: "https://salvo.example.com:8443" }).publicUrl).toBe("https://salvo.example.com:8443");
  });

  it("refuses what links could not be built on: another scheme, a path, a query, not a URL", () => {
    for (const value of ["ftp://salvo.example.com", "https://salvo.example.com/t", "https://salvo.example.com/?a=1", "salvo.example.com", ""]) {
      expect(() => config({ PUBLIC_URL: value }), value).toThrow(ConfigError);
    }
  });
});

describe("the tracking queue's write groups", () => {
  const hits = (count: number, tag: string) =>
    Array.from({ length: count }, (_, i) => ({ type: "OPEN" as const, payload: open, occurredAt: SENT, isMachine: false, eventId: `salvo-open:${tag}${i}` }));

  it("records messages together up to 1,000 hits, in order, and a message past it on its own", () => {
    const messages = [
      { id: "a", body: hits(600, "a") },
      { id: "b", body: hits(300, "b") },
      { id: "c", body: hits(200, "c") },
      { id: "d", body: hits(1000, "d") },
      // A message sent before hits were batched holds one hit itself.
      { id: "e", body: hits(1, "e")[0]! },
    ];
    expect(writeGroups(messages).map((group) => group.map((m) => m.id))).toEqual([["a", "b"], ["c"], ["d"], ["e"]]);
    expect(writeGroups([])).toEqual([]);
  });
});
