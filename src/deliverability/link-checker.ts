import type { LinkCheck } from "../db/schema";
import { guardedFetch, OutboundError, type OutboundPolicy } from "../platform/outbound";

/**
 * The link checker: every http(s) link of a test message followed by hand (redirects one hop at a
 * time, so the chain is counted and bounded), HEAD first and GET when HEAD is refused or fails,
 * each request under a timeout. A link is `ok` when its chain ends in a 2xx. Every hop goes through
 * the outbound rule: a link (or a redirect) to a private or loopback address is reported, not followed.
 */

interface LinkCheckOptions {
  /** The outbound rule's policy (src/platform/outbound.ts `urlPolicy`). */
  policy: OutboundPolicy;
  timeoutMs?: number;
  maxRedirects?: number;
  /** At most this many distinct links per message are followed. */
  maxLinks?: number;
}

const DEFAULTS = { timeoutMs: 5_000, maxRedirects: 5, maxLinks: 20 };

/** The distinct http(s) links of a message: hrefs of its HTML, then bare URLs of its text, in order. */
export function linksOf(html: string | null, text: string): string[] {
  const found: string[] = [];
  const add = (value: string) => {
    const url = value.replace(/&amp;/g, "&").trim();
    if (!/^https?:\/\//i.test(url) || !URL.canParse(url)) return;
    const normal = new URL(url).href;
    if (!found.includes(normal)) found.push(normal);
  };
  for (const match of (html ?? "").matchAll(/href\s*=\s*(?:"([^"]*)"|'([^']*)'|([^\s>]+))/gi)) add(match[1] ?? match[2] ?? match[3] ?? "");
  for (const match of text.matchAll(/https?:\/\/[^\s<>"')\]]+/gi)) add(match[0].replace(/[.,;:!?]+$/, ""));
  return found;
}

/** Links in mail may be plain http, and tracking links pass through Salvo itself. */
const LINK_RULES = { http: true, ownOrigin: true, redirects: 0 };

async function request(url: string, method: "HEAD" | "GET", policy: OutboundPolicy, timeoutMs: number): Promise<Response> {
  const { response } = await guardedFetch(url, { method }, policy, { ...LINK_RULES, timeoutMs });
  // Only the status and Location matter: the body is not read.
  await response.body?.cancel();
  return response;
}

/** One hop: HEAD, then GET when HEAD is not allowed, not implemented, or fails outright (a refusal is final). */
async function hop(url: string, policy: OutboundPolicy, timeoutMs: number): Promise<Response> {
  try {
    const head = await request(url, "HEAD", policy, timeoutMs);
    if (head.status !== 405 && head.status !== 501) return head;
  } catch (error) {
    // Some servers drop HEAD; GET below decides.
    if (error instanceof OutboundError && error.kind === "refused") throw error;
  }
  return request(url, "GET", policy, timeoutMs);
}

export async function checkLink(url: string, options: LinkCheckOptions): Promise<LinkCheck> {
  const { timeoutMs, maxRedirects, policy } = { ...DEFAULTS, ...options };
  let current = url;
  for (let redirects = 0; ; redirects += 1) {
    let response: Response;
    try {
      response = await hop(current, policy, timeoutMs);
    } catch (error) {
      return { url, status: null, final_url: current, redirects, ok: false, error: (error as Error).message };
    }
    const location = response.headers.get("Location");
    if (response.status >= 300 && response.status < 400 && location) {
      if (redirects >= maxRedirects) return { url, status: response.status, final_url: current, redirects, ok: false, error: `more than ${maxRedirects} redirects` };
      if (!URL.canParse(location, current)) return { url, status: response.status, final_url: current, redirects, ok: false, error: "a redirect to an invalid URL" };
      current = new URL(location, current).href;
      continue;
    }
    const ok = response.status >= 200 && response.status < 300;
    return { url, status: response.status, final_url: current, redirects, ok, ...(ok ? {} : { error: `HTTP ${response.status}` }) };
  }
}

/** Checks a message's links (up to maxLinks of them) side by side. */
export function checkLinks(urls: string[], options: LinkCheckOptions): Promise<LinkCheck[]> {
  return Promise.all(urls.slice(0, options.maxLinks ?? DEFAULTS.maxLinks).map((url) => checkLink(url, options)));
}
