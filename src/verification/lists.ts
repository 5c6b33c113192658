/**
 * The disposable-domain and role-address lists verification reads (CONTRACT 22: they ship with
 * Salvo and change by release). Both are maintained npm packages, pinned in package-lock.json:
 * - disposable domains: `disposable-email-domains-js` (CC0-1.0), a release of the community list
 *   github.com/disposable-email-domains/disposable-email-domains (`disposable_email_blocklist.conf`);
 * - role local parts: `role-based-email-addresses` (MIT, Mixmax), ~1,000 prefixes such as info, sales,
 *   admin, support, noreply.
 */
import { disposableEmailBlocklistSet } from "disposable-email-domains-js";
import roleLocalParts from "role-based-email-addresses";

let disposable: Set<string> | undefined;
let roles: Set<string> | undefined;

/** Whether the domain (A-labels, lower case) or a domain above it is a disposable-mail domain. */
export function isDisposableDomain(asciiDomain: string): boolean {
  disposable ??= disposableEmailBlocklistSet();
  const labels = asciiDomain.split(".");
  for (let i = 0; i < labels.length - 1; i += 1) if (disposable.has(labels.slice(i).join("."))) return true;
  return false;
}

/** Whether the local part (its `+tag` ignored) names a role rather than a person. */
export function isRoleLocalPart(localPart: string): boolean {
  roles ??= new Set(roleLocalParts.map((prefix) => prefix.toLowerCase()));
  return roles.has(localPart.toLowerCase().split("+")[0]!);
}
