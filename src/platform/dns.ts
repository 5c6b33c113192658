import { toBase64Url } from "./bytes";
/**
 * Address lookups over DNS-over-HTTPS (RFC 8484, wire format): Workers have no DNS API, so a name
 * Salvo is about to reach is resolved through the resolver the operator names (`DNS_RESOLVER_URL`).
 * A and AAAA are asked before connecting; answers are cached per isolate for their TTL (at most five
 * minutes), so a name that changes to a private address is seen again as soon as its record lets it.
 * MX is asked by email verification (`lookupMx`), which keeps its own cache per domain.
 */

const A = 1;
export const AAAA = 28;
export const PTR = 12;
export const MX = 15;
type RecordType = typeof A | typeof AAAA;

/** The resolver did not answer usably (unreachable, timed out, SERVFAIL, not DNS): nothing is known about the name. */
export class DnsError extends Error {}

interface Lookup {
  /** Every A and AAAA address the answer holds (a CNAME chain's end included); empty for NXDOMAIN or no data. */
  addresses: string[];
  /** The shortest TTL among them, in seconds. */
  ttl: number;
}

const TIMEOUT_MS = 3_000;
const MAX_CACHE_SECONDS = 300;
const NEGATIVE_CACHE_SECONDS = 30;
const MAX_CACHED = 1_000;
const cache = new Map<string, { lookup: Lookup; expires: number }>();

/** An RFC 1035 query for one name and type, id 0 and recursion desired (RFC 8484 4.1: id 0 keeps it cacheable). */
export function dnsQuery(name: string, type: RecordType | typeof PTR | typeof MX): Uint8Array {
  const labels = name.replace(/\.$/, "").split(".").map((label) => new TextEncoder().encode(label));
  const bytes = new Uint8Array(12 + labels.reduce((size, label) => size + 1 + label.length, 0) + 1 + 4);
  bytes.set([0, 0, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0]);
  let at = 12;
  for (const label of labels) {
    bytes[at++] = label.length;
    bytes.set(label, at);
    at += label.length;
  }
  bytes[at++] = 0;
  bytes.set([type >> 8, type & 0xff, 0, 1], at);
  return bytes;
}

/** Where the (possibly compressed) name starting at `at` ends. */
function skipName(bytes: Uint8Array, at: number): number {
  for (let hops = 0; hops < 128; hops += 1) {
    const length = bytes[at];
    if (length === undefined) throw new DnsError("truncated DNS answer");
    if (length === 0) return at + 1;
    if ((length & 0xc0) === 0xc0) return at + 2;
    at += 1 + length;
  }
  throw new DnsError("malformed DNS name");
}

function ipv6Text(rdata: Uint8Array): string {
  const groups = Array.from({ length: 8 }, (_, i) => (rdata[2 * i]! << 8) | rdata[2 * i + 1]!);
  // The longest run of two or more zero groups becomes "::" (RFC 5952).
  let best = { start: -1, length: 1 };
  for (let i = 0; i < 8; ) {
    let j = i;
    while (j < 8 && groups[j] === 0) j += 1;
    if (j - i > best.length) best = { start: i, length: j - i };
    i = j === i ? i + 1 : j;
  }
  const hex = groups.map((group) => group.toString(16));
  if (best.start < 0) return hex.join(":");
  return `${hex.slice(0, best.start).join(":")}::${hex.slice(best.start + best.length).join(":")}`;
}

/** The addresses of one type in a DNS answer; NXDOMAIN is an empty answer, any other failure a DnsError. */
export function parseDnsAnswer(bytes: Uint8Array, type: RecordType): Lookup {
  if (bytes.length < 12) throw new DnsError("truncated DNS answer");
  const rcode = bytes[3]! & 0x0f;
  if (rcode === 3) return { addresses: [], ttl: NEGATIVE_CACHE_SECONDS };
  if (rcode !== 0) throw new DnsError(`the resolver answered rcode ${rcode}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const questions = view.getUint16(4);
  const answers = view.getUint16(6);
  let at = 12;
  for (let i = 0; i < questions; i += 1) at = skipName(bytes, at) + 4;
  const addresses: string[] = [];
  let ttl = MAX_CACHE_SECONDS;
  for (let i = 0; i < answers; i += 1) {
    at = skipName(bytes, at);
    if (at + 10 > bytes.length) throw new DnsError("truncated DNS answer");
    const recordType = view.getUint16(at);
    const recordTtl = view.getUint32(at + 4);
    const length = view.getUint16(at + 8);
    const rdata = bytes.subarray(at + 10, at + 10 + length);
    if (rdata.length !== length) throw new DnsError("truncated DNS answer");
    at += 10 + length;
    if (recordType !== type) continue;
    if (type === A && length === 4) addresses.push(Array.from(rdata).join("."));
    else if (type === AAAA && length === 16) addresses.push(ipv6Text(rdata));
    else continue;
    ttl = Math.min(ttl, recordTtl);
  }
  return { addresses, ttl: addresses.length ? ttl : NEGATIVE_CACHE_SECONDS };
}

async function ask(resolverUrl: string, name: string, type: RecordType): Promise<Lookup> {
  return parseDnsAnswer(await fetchAnswer(resolverUrl, name, type), type);
}

async function fetchAnswer(resolverUrl: string, name: string, type: RecordType | typeof PTR | typeof MX): Promise<Uint8Array> {
  const url = new URL(resolverUrl);
  url.searchParams.set("dns", toBase64Url(dnsQuery(name, type)));
  let response: Response;
  try {
    response = await fetch(url, { headers: { Accept: "application/dns-message" }, signal: AbortSignal.timeout(TIMEOUT_MS) });
  } catch (error) {
    throw new DnsError(`the resolver could not be reached: ${(error as Error).message}`);
  }
  if (!response.ok || !(response.headers.get("Content-Type") ?? "").startsWith("application/dns-message")) {
    await response.body?.cancel();
    throw new DnsError(`the resolver answered HTTP ${response.status}`);
  }
  return new Uint8Array(await response.arrayBuffer());
}

/** A name's A and AAAA addresses through the resolver (cached for their TTL); DnsError when it cannot tell. */
export async function lookupAddresses(resolverUrl: string, name: string, now = Date.now()): Promise<Lookup> {
  const key = `${resolverUrl} ${name}`;
  const known = cache.get(key);
  if (known && known.expires > now) return known.lookup;
  const [v4, v6] = await Promise.all([ask(resolverUrl, name, A), ask(resolverUrl, name, AAAA)]);
  const lookup = { addresses: [...v4.addresses, ...v6.addresses], ttl: Math.min(v4.ttl, v6.ttl, MAX_CACHE_SECONDS) };
  cache.delete(key);
  if (lookup.ttl > 0) {
    if (cache.size >= MAX_CACHED) cache.delete(cache.keys().next().value!);
    cache.set(key, { lookup, expires: now + lookup.ttl * 1000 });
  }
  return lookup;
}

/** A domain's mail exchangers: `exists` false for NXDOMAIN; a null MX (RFC 7505) is the exchange "". */
export interface MxLookup {
  exists: boolean;
  exchanges: { preference: number; exchange: string }[];
}

/** The (possibly compressed) name starting at `at`, lower case, without the root's dot. */
function readName(bytes: Uint8Array, at: number): string {
  const labels: string[] = [];
  for (let hops = 0; hops < 128; hops += 1) {
    const length = bytes[at];
    if (length === undefined) throw new DnsError("truncated DNS answer");
    if (length === 0) return labels.join(".").toLowerCase();
    if ((length & 0xc0) === 0xc0) {
      at = ((length & 0x3f) << 8) | (bytes[at + 1] ?? 0);
      continue;
    }
    labels.push(new TextDecoder().decode(bytes.subarray(at + 1, at + 1 + length)));
    at += 1 + length;
  }
  throw new DnsError("malformed DNS name");
}

/** The names of a PTR answer (lower-cased); NXDOMAIN or no data is none, any other failure a DnsError. */
export function parsePtrAnswer(bytes: Uint8Array): string[] {
  if (bytes.length < 12) throw new DnsError("truncated DNS answer");
  const rcode = bytes[3]! & 0x0f;
  if (rcode === 3) return [];
  if (rcode !== 0) throw new DnsError(`the resolver answered rcode ${rcode}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 12;
  for (let i = 0; i < view.getUint16(4); i += 1) at = skipName(bytes, at) + 4;
  const names: string[] = [];
  for (let i = 0; i < view.getUint16(6); i += 1) {
    at = skipName(bytes, at);
    if (at + 10 > bytes.length) throw new DnsError("truncated DNS answer");
    const recordType = view.getUint16(at);
    const length = view.getUint16(at + 8);
    if (recordType === PTR) names.push(readName(bytes, at + 10).toLowerCase());
    at += 10 + length;
  }
  return names;
}

/** The reverse-lookup name of an IPv4 or IPv6 address (RFC 1035 3.5, RFC 3596 2.5); null for anything else. */
export function reverseName(ip: string): string | null {
  if (/^\d{1,3}(\.\d{1,3}){3}$/.test(ip)) return `${ip.split(".").reverse().join(".")}.in-addr.arpa`;
  if (!ip.includes(":")) return null;
  const [head, tail = ""] = ip.split("::");
  const groups = (part: string) => (part ? part.split(":") : []);
  const before = groups(head!);
  const after = groups(tail);
  const all = ip.includes("::") ? [...before, ...Array<string>(8 - before.length - after.length).fill("0"), ...after] : before;
  if (all.length !== 8 || all.some((group) => !/^[0-9a-f]{1,4}$/i.test(group))) return null;
  return `${[...all.map((group) => group.padStart(4, "0")).join("")].reverse().join(".").toLowerCase()}.ip6.arpa`;
}

/** The PTR names of an address through the resolver (not cached: reports ask rarely); DnsError when it cannot tell. */
export async function lookupPtr(resolverUrl: string, ip: string): Promise<string[]> {
  const name = reverseName(ip);
  if (name === null) return [];
  return parsePtrAnswer(await fetchAnswer(resolverUrl, name, PTR));
}

/** The MX records in a DNS answer; NXDOMAIN is `exists: false`, any other failure a DnsError. */
export function parseMxAnswer(bytes: Uint8Array): MxLookup {
  if (bytes.length < 12) throw new DnsError("truncated DNS answer");
  const rcode = bytes[3]! & 0x0f;
  if (rcode === 3) return { exists: false, exchanges: [] };
  if (rcode !== 0) throw new DnsError(`the resolver answered rcode ${rcode}`);
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let at = 12;
  for (let i = 0; i < view.getUint16(4); i += 1) at = skipName(bytes, at) + 4;
  const exchanges: MxLookup["exchanges"] = [];
  for (let i = 0; i < view.getUint16(6); i += 1) {
    at = skipName(bytes, at);
    if (at + 10 > bytes.length) throw new DnsError("truncated DNS answer");
    const recordType = view.getUint16(at);
    const length = view.getUint16(at + 8);
    if (at + 10 + length > bytes.length) throw new DnsError("truncated DNS answer");
    if (recordType === MX && length >= 3) exchanges.push({ preference: view.getUint16(at + 10), exchange: readName(bytes, at + 12) });
    at += 10 + length;
  }
  return { exists: true, exchanges: exchanges.sort((a, b) => a.preference - b.preference) };
}

/** A domain's MX records through the resolver (not cached here); DnsError when it cannot tell. */
export async function lookupMx(resolverUrl: string, name: string): Promise<MxLookup> {
  return parseMxAnswer(await fetchAnswer(resolverUrl, name, MX));
}
