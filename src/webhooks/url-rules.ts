/**
 * Where a webhook may point. Deployed Workers cannot reach IP literals but `wrangler dev` can, so
 * the rules are ours, not the platform's: https, no credentials, a name that is not an IP literal
 * and not a local-only name. `allowInsecure` (local development) admits http and loopback names.
 */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

const LOCAL_SUFFIXES = [".local", ".internal", ".localhost", ".home.arpa"];

function isIpLiteral(hostname: string): boolean {
  if (hostname.startsWith("[")) return true;
  // WHATWG URL parsing has already turned decimal, octal and hex IPv4 forms into dotted quads.
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(hostname);
}

function isLocalName(hostname: string): boolean {
  return hostname === "localhost" || LOCAL_SUFFIXES.some((suffix) => hostname.endsWith(suffix)) || !hostname.includes(".");
}

function isLoopback(hostname: string): boolean {
  return hostname === "localhost" || hostname === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(hostname);
}

/** Why a URL is refused, or null when it is acceptable. */
export function webhookUrlProblem(value: string, allowInsecure: boolean): string | null {
  if (value.length > MAX_WEBHOOK_URL_LENGTH) return `must be at most ${MAX_WEBHOOK_URL_LENGTH} characters`;
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return "must be an absolute URL";
  }
  if (url.username || url.password) return "must not carry credentials";
  if (allowInsecure && isLoopback(url.hostname) && (url.protocol === "http:" || url.protocol === "https:")) return null;
  if (url.protocol !== "https:" && !(allowInsecure && url.protocol === "http:")) return "must use https";
  if (isIpLiteral(url.hostname)) return "must name a host, not an IP address";
  if (isLocalName(url.hostname)) return "must name a public host";
  return null;
}
