import { DnsError, lookupAddresses, lookupPtr, reverseName } from "../platform/dns";
import { firstHop } from "./copy-headers";
import type { CopyRow } from "./copy-report-store";

/**
 * The reverse DNS of the IP that handed a test email to the seed's provider (CONTRACT 21.6): the IP
 * its first Received header names (else the sending hop the checker recorded), the PTR name that
 * header's reverse-lookup text gives (else a PTR query through the resolver, DNS_RESOLVER_URL), and
 * whether that name's A/AAAA include the IP. What cannot be known (no copy, no IP, no resolver or no
 * answer from it) stays null: never a guess.
 */
export interface Rdns {
  ip: string | null;
  ptr: string | null;
  /** true: the name's addresses include the IP; false: they do not, or the address has no PTR; null: unknown. */
  rdns_verified: boolean | null;
  /** Where the PTR name came from: the provider's Received header, a PTR query, or nowhere. */
  rdns_source: "received_header" | "ptr_query" | "unknown";
}

const UNKNOWN: Rdns = { ip: null, ptr: null, rdns_verified: null, rdns_source: "unknown" };

/** Same address whatever its written form (IPv6 compression, case). */
const sameAddress = (a: string, b: string) => reverseName(a) !== null && reverseName(a) === reverseName(b);

async function confirmed(resolverUrl: string | null, name: string, ip: string): Promise<boolean | null> {
  if (resolverUrl === null) return null;
  try {
    return (await lookupAddresses(resolverUrl, name)).addresses.some((address) => sameAddress(address, ip));
  } catch (error) {
    if (error instanceof DnsError) return null;
    throw error;
  }
}

export async function rdnsOf(copy: CopyRow, resolverUrl: string | null): Promise<Rdns> {
  const received = copy.folder !== "pending" && copy.folder !== "not_received";
  if (!received) return UNKNOWN;
  const hop = copy.rawHeaders === null ? { ip: copy.senderIp, reverse: null } : firstHop(copy.rawHeaders);
  if (hop.ip === null) return UNKNOWN;
  if (hop.reverse !== null) {
    return { ip: hop.ip, ptr: hop.reverse, rdns_verified: await confirmed(resolverUrl, hop.reverse, hop.ip), rdns_source: "received_header" };
  }
  if (resolverUrl === null) return { ...UNKNOWN, ip: hop.ip };
  let names: string[];
  try {
    names = await lookupPtr(resolverUrl, hop.ip);
  } catch (error) {
    if (error instanceof DnsError) return { ...UNKNOWN, ip: hop.ip };
    throw error;
  }
  const name = names[0];
  if (name === undefined) return { ip: hop.ip, ptr: null, rdns_verified: false, rdns_source: "ptr_query" };
  return { ip: hop.ip, ptr: name, rdns_verified: await confirmed(resolverUrl, name, hop.ip), rdns_source: "ptr_query" };
}
