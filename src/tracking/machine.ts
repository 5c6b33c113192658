/**
 * Was a tracking hit (pixel load or link click) made by a machine rather than the lead? Pure, so
 * the rules are tested as a table. What is known of the machines:
 *
 * - Apple Mail Privacy Protection fetches every image of a message through Apple's proxy when the
 *   message arrives, opened or not, with the bare user agent `Mozilla/5.0` (no browser sends that).
 * - Gmail's image proxy (`GoogleImageProxy`) and Yahoo's (`YahooMailProxy`) fetch images when the
 *   message is opened and cache them, so their hits are kept as opens (a person's, one per cache).
 *   Gmail also prefetches images for signed-in sessions with a fixed, years-old Edge user agent
 *   (Chrome/42.0.2311.135 ... Edge/12.246): those are machine.
 * - Link scanners (Microsoft Defender Safe Links, Proofpoint URL Defense, Mimecast, Barracuda and
 *   other secure email gateways) follow every link of a message on delivery, often with ordinary
 *   browser user agents from data centres: a hit within seconds of the send is theirs whatever the
 *   user agent says; some name themselves.
 * - Crawlers, link preview fetchers, HTTP libraries and HEAD requests are not a person reading.
 */

/** A person does not open or click within this long of the send; a scanner on delivery does. */
export const SCANNER_WINDOW_MS = 10_000;

interface TrackingHit {
  method: string;
  userAgent: string | null;
  /** When the hit arrived and when the email was sent, in ms. */
  now: number;
  sentAt: number;
}

type HitClass = { machine: false } | { machine: true; reason: string };

const GMAIL_PREFETCH = /Chrome\/42\.0\.2311\.135 .*Edge\/12\.246/;

const NAMED_MACHINES: [RegExp, string][] = [
  [/safelinks|microsoft defender|bingpreview|skypeuripreview/i, "microsoft-link-scanner"],
  [/proofpoint/i, "proofpoint"],
  [/mimecast/i, "mimecast"],
  [/barracuda/i, "barracuda"],
  [/forcepoint|symantec|ironport|sophos|trend ?micro|fortinet|fortiguard|zscaler/i, "security-gateway"],
  [
    /bot\b|bot\/|crawl|spider|slurp|preview|headless|phantomjs|scanner|facebookexternalhit|whatsapp|slack|discord|telegram/i,
    "bot",
  ],
  [/^(curl|wget|python|go-http-client|java|okhttp|axios|node-fetch|undici|libwww|apache-httpclient|ruby|php)\b/i, "http-library"],
];

export function classifyHit(hit: TrackingHit): HitClass {
  if (hit.method.toUpperCase() === "HEAD") return { machine: true, reason: "head-request" };
  const agent = hit.userAgent?.trim() ?? "";
  if (agent === "") return { machine: true, reason: "no-user-agent" };
  if (agent === "Mozilla/5.0") return { machine: true, reason: "apple-mail-privacy-protection" };
  if (GMAIL_PREFETCH.test(agent)) return { machine: true, reason: "gmail-prefetch" };
  for (const [pattern, reason] of NAMED_MACHINES) {
    if (pattern.test(agent)) return { machine: true, reason };
  }
  if (hit.now - hit.sentAt < SCANNER_WINDOW_MS) return { machine: true, reason: "within-seconds-of-send" };
  return { machine: false };
}
