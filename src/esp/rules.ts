/**
 * Which email provider a domain or a mailbox is on (CONTRACT 23.3), as pure rules: a domain's
 * provider comes from its MX hosts, a mailbox's from its type or else its domain's. ESP matching
 * pins a record's first send to a mailbox of its recipient's provider; the leads filter answers the
 * hosted `esp_domain_type` through `espDomainType`.
 */

import { EMAIL_PROVIDERS } from "../db/schema";

export const PROVIDERS = EMAIL_PROVIDERS;
/** A known provider; null where it is not known (no MX answer yet, or the resolver could not tell). */
export type Provider = (typeof PROVIDERS)[number];

/** Consumer domains Microsoft serves whatever their MX says (outlook.com, hotmail.*, live.*, msn.com). */
const MICROSOFT_DOMAIN = /^(outlook\.com|msn\.com|(hotmail|live)\.[a-z.]+)$/;

function hostIn(host: string, domain: string): boolean {
  return host === domain || host.endsWith(`.${domain}`);
}

/**
 * A domain's provider from its MX hosts: `google` for hosts under google.com or googlemail.com,
 * `microsoft` under protection.outlook.com (and the consumer domains, whatever their MX), `other`
 * for any other MX, null when the domain has no MX host (nothing to match on).
 */
export function providerOfDomain(domain: string, mxHosts: readonly string[]): Provider | null {
  const name = domain.trim().toLowerCase().replace(/\.$/, "");
  if (MICROSOFT_DOMAIN.test(name)) return "microsoft";
  const hosts = mxHosts.map((host) => host.trim().toLowerCase().replace(/\.$/, "")).filter((host) => host !== "");
  if (hosts.length === 0) return null;
  if (hosts.some((host) => hostIn(host, "google.com") || hostIn(host, "googlemail.com"))) return "google";
  if (hosts.some((host) => hostIn(host, "protection.outlook.com"))) return "microsoft";
  return "other";
}

/** A mailbox's provider: GMAIL → google, OUTLOOK → microsoft, else its sending domain's (null while unknown). */
export function providerOfMailbox(type: string, domainProvider: Provider | null): Provider | null {
  if (type === "GMAIL") return "google";
  if (type === "OUTLOOK") return "microsoft";
  return domainProvider;
}

/**
 * The hosted service's `esp_domain_type` for a provider (CONTRACT 23.3, inferred meaning): 1 google,
 * 2 microsoft, 0 other or unknown. The leads filter compares a lead's value with this.
 */
export function espDomainType(provider: Provider | null): 0 | 1 | 2 {
  return provider === "google" ? 1 : provider === "microsoft" ? 2 : 0;
}
