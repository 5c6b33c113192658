/**
 * Where a webhook may point. Deployed Workers cannot reach IP literals but `wrangler dev` can, so
 * the rules are ours, not the platform's: https on the default port, no credentials, a public
 * name (not an IP literal, not a local-only or private-use name). `allowInsecure` (local
 * development) admits http, loopback names and other ports.
 */
export const MAX_WEBHOOK_URL_LENGTH = 2048;

/** Names that resolve only inside a machine or a private network (RFC 6761, 6762, 8375, common private TLDs). */
const PRIVATE_NAMES = ["localhost", "metadata.google.internal"];
const PRIVATE_SUFFIXES = ["localhost", "local", "internal", "lan", "corp", "home", "home.arpa", "intranet", "private"];

/**
 * The host the rules judge: the URL parser has already lower-cased it and applied IDNA (so
 * `LOCALHOST` and full-width forms arrive as `localhost`); one trailing dot (the DNS root,
 * `localhost.`) is stripped so it cannot slip past the suffix checks.
 */
export function normaliseHost(hostname: string): string {
  return hostname.toLowerCase().replace(/\.$/, "");
}

function isIpLiteral(host: string): boolean {
  if (host.startsWith("[")) return true;
  // WHATWG URL parsing has already turned decimal, octal and hex IPv4 forms into dotted quads.
  return /^\d{1,3}(\.\d{1,3}){3}$/.test(host);
}

function isPrivateName(host: string): boolean {
  if (!host.includes(".")) return true;
  if (PRIVATE_NAMES.includes(host)) return true;
  return PRIVATE_SUFFIXES.some((suffix) => host.endsWith(`.${suffix}`));
}

function isLoopback(host: string): boolean {
  return host === "localhost" || host.endsWith(".localhost") || host === "[::1]" || /^127\.\d{1,3}\.\d{1,3}\.\d{1,3}$/.test(host);
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
  const host = normaliseHost(url.hostname);
  if (allowInsecure && isLoopback(host) && (url.protocol === "http:" || url.protocol === "https:")) return null;
  if (url.protocol !== "https:" && !(allowInsecure && url.protocol === "http:")) return "must use https";
  // The parser drops a default port (":443" for https), so any port left is a non-default one.
  if (url.port && !allowInsecure) return "must use the default https port (443)";
  if (isIpLiteral(host)) return "must name a host, not an IP address";
  if (isPrivateName(host)) return "must name a public host";
  return null;
}
