import type { Config } from "../config";
import { ipv6Groups } from "./client-ip";
import { lookupAddresses } from "./dns";

/**
 * The one outbound-address rule: where Salvo may fetch from or connect to, for every host a tenant
 * names (webhook URLs, reply attachments, links the link checker follows, mailbox and seed servers,
 * tracking domains). A host is judged by its spelling first: IP literals in every form the URL parser
 * reads (decimal, octal, hex, dotted short forms, IPv4-mapped, -compatible, NAT64, 6to4, Teredo) and
 * special-use or private names. Then a name is resolved over DNS-over-HTTPS and every address it has
 * is judged the same way, when it is saved and again each time Salvo connects (deployed Workers
 * cannot reach private addresses anyway; a self-hosted runtime can). Redirects are followed by hand,
 * each hop judged again.
 */
export interface OutboundPolicy {
  /**
   * What local development admits besides public destinations: nothing (production), loopback and
   * http on any port (`ALLOW_INSECURE_WEBHOOKS`: a receiver on this machine), or any local or private
   * host (`ALLOW_LOCAL_MAIL_HOSTS`: a mail sink on a private network).
   */
  local: "none" | "loopback" | "private";
  /** The RFC 8484 resolver names are checked with; null: names are judged by their spelling only. */
  resolverUrl: string | null;
  /** Salvo's own `host[:port]` (PUBLIC_URL's): a fetch never goes back into Salvo. */
  ownHosts: readonly string[];
}

/** The rule for URLs Salvo fetches (webhooks, attachments, links). */
export function urlPolicy(settings: Config): OutboundPolicy {
  return { local: settings.allowInsecureWebhooks ? "loopback" : "none", resolverUrl: settings.dnsResolverUrl, ownHosts: [new URL(settings.publicUrl).host] };
}

/** The rule for mail servers Salvo connects to (mailboxes' SMTP and IMAP, seeds' IMAP). */
export function mailPolicy(settings: Config): OutboundPolicy {
  return { local: settings.allowLocalMailHosts ? "private" : "none", resolverUrl: settings.dnsResolverUrl, ownHosts: [] };
}

/** A refused destination, or a fetch that failed within its bounds; `transient` when trying later may succeed. */
export class OutboundError extends Error {
  constructor(
    message: string,
    readonly kind: "refused" | "timeout" | "too_large" | "redirects" | "unreachable",
    readonly transient: boolean,
  ) {
    super(message);
  }
}

type Host = { kind: "ipv4"; text: string; value: number } | { kind: "ipv6"; text: string; groups: number[] } | { kind: "name"; text: string };

const LABEL = /^(?!-)[a-z0-9_-]{1,63}(?<!-)$/;

/**
 * A URL's hostname as judged: the WHATWG parser has already lower-cased it, applied IDNA and turned
 * every IPv4 spelling (`2130706433`, `0x7f.1`, `0177.0.0.1`, `127.1`) into a dotted quad; one
 * trailing dot (the DNS root) is dropped so `localhost.` is `localhost`. Null when it is no host.
 */
export function hostOf(hostname: string): Host | null {
  const host = hostname.toLowerCase().replace(/\.$/, "");
  if (host.startsWith("[")) {
    const groups = ipv6Groups(host.slice(1, -1));
    return groups ? { kind: "ipv6", text: host.slice(1, -1), groups } : null;
  }
  const quad = /^(\d{1,3})\.(\d{1,3})\.(\d{1,3})\.(\d{1,3})$/.exec(host);
  if (quad) {
    const octets = quad.slice(1).map(Number);
    if (octets.some((octet) => octet > 255)) return null;
    return { kind: "ipv4", text: host, value: octets.reduce((value, octet) => value * 256 + octet, 0) };
  }
  if (!host || host.length > 253 || !host.split(".").every((label) => LABEL.test(label))) return null;
  return { kind: "name", text: host };
}

/** A host as a user writes it in a field (a mail server, a seed), read the way a URL's would be. */
export function parseHost(value: string): Host | null {
  const given = value.trim();
  if (!given || /[\s/@?#\\]/.test(given)) return null;
  const spelled = `http://${given.includes(":") && !given.startsWith("[") ? `[${given}]` : given}/`;
  if (!URL.canParse(spelled)) return null;
  const url = new URL(spelled);
  if (url.port || url.pathname !== "/" || url.username || url.password) return null;
  return hostOf(url.hostname);
}

/** What makes a host no public destination; `loopback` when it is this machine (the development switch admits those). */
interface Finding {
  what: string;
  loopback: boolean;
}

const ipv4 = (text: string) => text.split(".").reduce((value, octet) => value * 256 + Number(octet), 0);

/** IANA's special-purpose IPv4 registry, the broadcast address first (it sits inside 240/4). */
const IPV4_RANGES: [number, number, string][] = (
  [
    ["255.255.255.255", 32, "the broadcast address"],
    ["0.0.0.0", 8, "a “this network” address"],
    ["10.0.0.0", 8, "a private address"],
    ["100.64.0.0", 10, "a carrier-grade NAT address"],
    ["127.0.0.0", 8, "a loopback address"],
    ["169.254.0.0", 16, "a link-local address (cloud metadata services answer there)"],
    ["172.16.0.0", 12, "a private address"],
    ["192.0.0.0", 24, "an IETF protocol address"],
    ["192.0.2.0", 24, "a documentation address"],
    ["192.88.99.0", 24, "a 6to4 relay address"],
    ["192.168.0.0", 16, "a private address"],
    ["198.18.0.0", 15, "a benchmarking address"],
    ["198.51.100.0", 24, "a documentation address"],
    ["203.0.113.0", 24, "a documentation address"],
    ["224.0.0.0", 4, "a multicast address"],
    ["240.0.0.0", 4, "a reserved address"],
  ] as const
).map(([base, bits, what]) => [ipv4(base), bits, what]);

const LOOPBACK_V4 = ipv4("127.0.0.0");

function ipv4Finding(value: number): Finding | null {
  for (const [base, bits, what] of IPV4_RANGES) {
    const size = 2 ** (32 - bits);
    if (value - (value % size) === base) return { what, loopback: base === LOOPBACK_V4 };
  }
  return null;
}

const ipv4Text = (value: number) => [24, 16, 8, 0].map((shift) => Math.floor(value / 2 ** shift) % 256).join(".");

/** A prefix as its groups, parsed once. */
const v6 = (prefix: string) => ipv6Groups(prefix)!;

function inPrefix(groups: number[], base: number[], bits: number): boolean {
  for (let i = 0; bits > 0; i += 1, bits -= 16) {
    const mask = bits >= 16 ? 0xffff : (0xffff << (16 - bits)) & 0xffff;
    if ((groups[i]! & mask) !== (base[i]! & mask)) return false;
  }
  return true;
}

/** IANA's special-purpose IPv6 registry, and anything outside global unicast (2000::/3). */
const IPV6_RANGES: [number[], number, string][] = (
  [
    ["64:ff9b:1::", 48, "a local-use NAT64 address"],
    ["100::", 64, "a discard-only address"],
    ["2001:db8::", 32, "a documentation address"],
    ["2001::", 32, "a Teredo tunnel address"],
    ["2001::", 23, "an IETF protocol address"],
    ["2002::", 16, "a 6to4 tunnel address"],
    ["3fff::", 20, "a documentation address"],
    ["5f00::", 16, "an SRv6 segment address"],
    ["fc00::", 7, "a private (unique local) address"],
    ["fe80::", 10, "a link-local address"],
    ["fec0::", 10, "a site-local address"],
    ["ff00::", 8, "a multicast address"],
  ] as const
).map(([prefix, bits, what]) => [v6(prefix), bits, what]);
const MAPPED = v6("::ffff:0:0");
const NAT64 = v6("64:ff9b::");
const COMPATIBLE = v6("::");
const GLOBAL_UNICAST = v6("2000::");

function ipv6Finding(groups: number[]): Finding | null {
  const embedded = groups[6]! * 65536 + groups[7]!;
  if (groups.every((group) => group === 0)) return { what: "the unspecified address", loopback: false };
  if (groups.slice(0, 7).every((group) => group === 0) && groups[7] === 1) return { what: "the loopback address", loopback: true };
  // The IPv4 address inside is what a mapped or NAT64 address reaches: it is judged instead.
  for (const [prefix, form] of [[MAPPED, "IPv4-mapped"], [NAT64, "NAT64"]] as const) {
    if (!inPrefix(groups, prefix, 96)) continue;
    const inner = ipv4Finding(embedded);
    return inner && { what: `${ipv4Text(embedded)} in ${form} form, ${inner.what}`, loopback: inner.loopback && form === "IPv4-mapped" };
  }
  if (inPrefix(groups, COMPATIBLE, 96)) return { what: `${ipv4Text(embedded)} in IPv4-compatible form (deprecated)`, loopback: false };
  for (const [prefix, bits, what] of IPV6_RANGES) if (inPrefix(groups, prefix, bits)) return { what, loopback: false };
  return inPrefix(groups, GLOBAL_UNICAST, 3) ? null : { what: "not a global unicast address", loopback: false };
}

/**
 * Names that only a machine or a private network resolves: RFC 6761 (`localhost`, `invalid`), 6762
 * (`local`), 7686 (`onion`), 8375 (`home.arpa`, and `arpa` as a whole), 9476 (`alt`), ICANN's
 * private-use `internal`, Kubernetes' `svc`, and the private TLDs in common use. Single-label names
 * are refused apart (a search domain completes them).
 */
const PRIVATE_SUFFIXES = ["localdomain", "local", "internal", "intranet", "private", "lan", "corp", "home", "arpa", "svc", "invalid", "onion", "alt"];

function nameFinding(name: string): Finding | null {
  if (name === "localhost" || name.endsWith(".localhost")) return { what: "a loopback name", loopback: true };
  if (!name.includes(".")) return { what: "a single-label name (only a local network resolves it)", loopback: false };
  const suffix = PRIVATE_SUFFIXES.find((candidate) => name === candidate || name.endsWith(`.${candidate}`));
  return suffix ? { what: `a private or special-use name (.${suffix})`, loopback: false } : null;
}

function findingOf(host: Host): Finding | null {
  if (host.kind === "name") return nameFinding(host.text);
  return host.kind === "ipv4" ? ipv4Finding(host.value) : ipv6Finding(host.groups);
}

function admits(policy: OutboundPolicy, finding: Finding | null): boolean {
  return finding === null || policy.local === "private" || (policy.local === "loopback" && finding.loopback);
}

/** Why a host may not be reached, judged by its spelling alone (no lookup); null when it may. */
export function hostProblem(host: Host, policy: OutboundPolicy): string | null {
  const finding = findingOf(host);
  return admits(policy, finding) ? null : `${host.text} is ${finding!.what}`;
}

/**
 * Why a name may not be reached judged by the addresses it resolves to, or null. Only names with a
 * resolver configured and no development switch admitting everything are looked up. When the
 * resolver cannot answer, a save goes on (the connection checks again) and a connection does not.
 */
async function resolvedProblem(host: Host, policy: OutboundPolicy, moment: "save" | "connect"): Promise<OutboundError | null> {
  if (host.kind !== "name" || policy.local === "private" || policy.resolverUrl === null || findingOf(host)) return null;
  let addresses: string[];
  try {
    addresses = (await lookupAddresses(policy.resolverUrl, host.text)).addresses;
  } catch (error) {
    return moment === "save" ? null : new OutboundError(`${host.text} could not be checked: ${(error as Error).message}`, "unreachable", true);
  }
  for (const address of addresses) {
    const resolved = hostOf(address.includes(":") ? `[${address}]` : address);
    const finding = resolved && findingOf(resolved);
    if (resolved && !admits(policy, finding)) return new OutboundError(`${host.text} resolves to ${address}, ${finding!.what}`, "refused", false);
  }
  return null;
}

/** A mail server or seed host as stored (normalised), or why it is refused: the save's check, lookup included. */
export async function checkHost(value: string, policy: OutboundPolicy): Promise<{ host: string } | { problem: string }> {
  const host = parseHost(value);
  if (!host) return { problem: "must be a host name or IP address (the port has its own field)" };
  const problem = hostProblem(host, policy) ?? (await resolvedProblem(host, policy, "save"))?.message;
  return problem ? { problem: `must be a public host (${problem})` } : { host: host.text };
}

/** The connection's check (the mail kit calls it before every connect): why `value` may not be reached now, or null. */
export async function connectRefusal(value: string, policy: OutboundPolicy): Promise<OutboundError | null> {
  const host = parseHost(value);
  if (!host) return new OutboundError(`refused to connect: ${JSON.stringify(value)} is not a host`, "refused", false);
  const problem = hostProblem(host, policy);
  if (problem) return new OutboundError(`refused to connect: ${problem}`, "refused", false);
  const resolved = await resolvedProblem(host, policy, "connect");
  return resolved && new OutboundError(`refused to connect: ${resolved.message}`, resolved.kind, resolved.transient);
}

/** What a kind of URL may also be, beyond https to a public name on any port. */
export interface UrlRules {
  /** http as well (the link checker: links in mail may be http). */
  http?: boolean;
  /** Only the scheme's default port (webhooks, CONTRACT section 5). */
  defaultPortOnly?: boolean;
  /** No IP literal, public or not (webhooks, CONTRACT section 5); loopback ones under the development switch. */
  noIpLiterals?: boolean;
  /** Salvo's own origin (the link checker follows tracking links through it). */
  ownOrigin?: boolean;
}

/** Why a URL may not be fetched, judged by its spelling alone; null when it may. */
export function urlProblem(value: string, policy: OutboundPolicy, rules: UrlRules = {}): string | null {
  if (!URL.canParse(value)) return "must be an absolute URL";
  const url = new URL(value);
  const development = policy.local !== "none";
  const http = rules.http || development;
  if (url.protocol !== "https:" && !(http && url.protocol === "http:")) return http ? "must be an http(s) URL" : "must use https";
  if (url.username || url.password) return "must not carry credentials";
  const host = hostOf(url.hostname);
  if (!host) return "must name a valid host";
  const finding = findingOf(host);
  if (rules.noIpLiterals && host.kind !== "name" && !(development && finding?.loopback)) return "must name a host, not an IP address";
  if (!admits(policy, finding)) return `must name a public host (${host.text} is ${finding!.what})`;
  // The parser drops a default port, so any port left is another one.
  if (rules.defaultPortOnly && url.port && !development) return "must use the default https port (443)";
  if (!rules.ownOrigin && policy.ownHosts.includes(url.host)) return "must not point to Salvo itself";
  return null;
}

/** A URL's check when it is saved: its spelling, then the addresses its host resolves to. */
export async function checkUrl(value: string, policy: OutboundPolicy, rules: UrlRules = {}): Promise<string | null> {
  const problem = urlProblem(value, policy, rules);
  if (problem) return problem;
  const resolved = await resolvedProblem(hostOf(new URL(value).hostname)!, policy, "save");
  return resolved && `must name a public host (${resolved.message})`;
}

async function refuseUrl(value: string, policy: OutboundPolicy, rules: UrlRules): Promise<void> {
  const problem = urlProblem(value, policy, rules);
  if (problem) throw new OutboundError(`refused ${value}: it ${problem}`, "refused", false);
  const resolved = await resolvedProblem(hostOf(new URL(value).hostname)!, policy, "connect");
  if (resolved) throw new OutboundError(`refused ${value}: ${resolved.message}`, resolved.kind, resolved.transient);
}

interface FetchLimits extends UrlRules {
  /** Redirects followed (each hop judged again), for GET and HEAD; 0: a redirect is the answer. */
  redirects: number;
  /** For every hop and the body together. */
  timeoutMs: number;
}

interface Fetched {
  response: Response;
  /** The URL that answered (after redirects). */
  url: string;
  /** The body, refused past `maxBytes` (a lying or absent Content-Length included) and within the fetch's time. */
  bytes(maxBytes: number): Promise<Uint8Array>;
}

function failure(error: unknown, timeoutMs: number): OutboundError {
  if (error instanceof OutboundError) return error;
  const name = (error as Error | undefined)?.name;
  if (name === "TimeoutError" || name === "AbortError") return new OutboundError(`timed out after ${timeoutMs} ms`, "timeout", true);
  return new OutboundError(String((error as Error | undefined)?.message ?? error), "unreachable", true);
}

async function readBounded(response: Response, maxBytes: number, timeoutMs: number): Promise<Uint8Array> {
  if (Number(response.headers.get("Content-Length") ?? NaN) > maxBytes) {
    await response.body?.cancel();
    throw new OutboundError(`larger than ${maxBytes} bytes`, "too_large", false);
  }
  const chunks: Uint8Array[] = [];
  let size = 0;
  const reader = response.body?.getReader();
  try {
    for (let next = await reader?.read(); next && !next.done; next = await reader!.read()) {
      size += next.value.byteLength;
      if (size > maxBytes) throw new OutboundError(`larger than ${maxBytes} bytes`, "too_large", false);
      chunks.push(next.value);
    }
  } catch (error) {
    await reader?.cancel().catch(() => {});
    throw failure(error, timeoutMs);
  }
  const bytes = new Uint8Array(size);
  let offset = 0;
  for (const chunk of chunks) {
    bytes.set(chunk, offset);
    offset += chunk.byteLength;
  }
  return bytes;
}

/**
 * fetch() under the rule: every hop's URL judged (spelling and lookup) before it is requested,
 * redirects followed by hand up to `limits.redirects`, one deadline for the hops and the body. Every
 * failure is an OutboundError: refused, timed out, too many redirects, unreachable, too large.
 */
export async function guardedFetch(value: string, init: RequestInit, policy: OutboundPolicy, limits: FetchLimits): Promise<Fetched> {
  const signal = AbortSignal.timeout(limits.timeoutMs);
  let url = value;
  for (let redirects = 0; ; redirects += 1) {
    let response: Response;
    try {
      await refuseUrl(url, policy, limits);
      response = await fetch(url, { ...init, redirect: "manual", signal });
    } catch (error) {
      throw failure(error, limits.timeoutMs);
    }
    const location = response.headers.get("Location");
    if (limits.redirects === 0 || response.status < 300 || response.status >= 400 || !location) {
      return { response, url, bytes: (maxBytes) => readBounded(response, maxBytes, limits.timeoutMs) };
    }
    await response.body?.cancel();
    if (redirects >= limits.redirects) throw new OutboundError(`more than ${limits.redirects} redirects`, "redirects", false);
    if (!URL.canParse(location, url)) throw new OutboundError(`a redirect to an invalid URL (${location.slice(0, 200)})`, "unreachable", false);
    url = new URL(location, url).href;
  }
}
