/**
 * Verifying addresses (CONTRACT 22): spelling and the lists here, each distinct domain's DNS once
 * (MX over DNS-over-HTTPS through `DNS_RESOLVER_URL`, kept 24 h in `email_domain_checks`), and the
 * optional external verifier for mailbox existence and catch-all (Workers cannot open port 25).
 */
import { sql } from "drizzle-orm";
import type { Config } from "../config";
import { DnsError, lookupAddresses, lookupMx } from "../platform/dns";
import { log } from "../platform/logging";
import { jsonList, rawBatch } from "../platform/sql";
import type { Provider } from "../esp/rules";
import { classify, domainProvider, parseAddress, type DomainVerdict, type ExternalAnswer, type VerificationResult } from "./rules";

const DOMAIN_TTL_MS = 24 * 3_600_000;
/** A domain's provider is kept longer than its verdict (CONTRACT 23.3: 7 days). */
const PROVIDER_TTL_MS = 7 * 86_400_000;
/** Lookups in flight at once (each domain asks MX, and A/AAAA when there is no MX). */
const DNS_CONCURRENCY = 8;
/** Addresses per call to the external verifier. */
const VERIFIER_BATCH = 100;
const VERIFIER_TIMEOUT_MS = 30_000;

export interface VerifierSettings {
  resolverUrl: string | null;
  verifier: Config["emailVerifier"];
}

export function verifierSettings(settings: Config): VerifierSettings {
  return { resolverUrl: settings.dnsResolverUrl, verifier: settings.emailVerifier };
}

/** One domain's verdict from the resolver; a resolver failure is `dns_error` (never cached). */
async function lookupDomain(resolverUrl: string | null, asciiDomain: string): Promise<DomainVerdict> {
  if (resolverUrl === null) return { outcome: "dns_error", mxHosts: [] };
  try {
    const mx = await lookupMx(resolverUrl, asciiDomain);
    if (!mx.exists) return { outcome: "no_domain", mxHosts: [] };
    const hosts = mx.exchanges.map((exchange) => exchange.exchange);
    if (hosts.length === 1 && hosts[0] === "") return { outcome: "null_mx", mxHosts: [] };
    if (hosts.length > 0) return { outcome: "mx", mxHosts: hosts.filter(Boolean) };
    // No MX: RFC 5321 5.1's implicit MX is the domain's own address.
    const addresses = await lookupAddresses(resolverUrl, asciiDomain);
    return { outcome: addresses.addresses.length > 0 ? "a" : "no_mx", mxHosts: [] };
  } catch (error) {
    if (error instanceof DnsError) return { outcome: "dns_error", mxHosts: [] };
    throw error;
  }
}

async function mapLimited<T, R>(items: T[], limit: number, work: (item: T) => Promise<R>): Promise<R[]> {
  const results: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const index = next++;
      results[index] = await work(items[index]!);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return results;
}

/** Each domain's verdict: the cached ones still fresh, the rest asked now and cached. */
export async function domainVerdicts(d1: D1Database, resolverUrl: string | null, domains: string[], now: number): Promise<Map<string, DomainVerdict>> {
  const verdicts = new Map<string, DomainVerdict>();
  if (domains.length === 0) return verdicts;
  const [cached] = await rawBatch(d1, [
    sql`SELECT domain, outcome, mx_hosts FROM email_domain_checks
        WHERE domain IN (SELECT value FROM json_each(${jsonList(domains)})) AND expires_at > ${now}`,
  ]);
  for (const row of cached!) verdicts.set(String(row.domain), { outcome: row.outcome as DomainVerdict["outcome"], mxHosts: JSON.parse(String(row.mx_hosts)) as string[] });
  const missing = domains.filter((domain) => !verdicts.has(domain));
  const found = await mapLimited(missing, DNS_CONCURRENCY, (domain) => lookupDomain(resolverUrl, domain));
  const fresh: { domain: string; outcome: string; mx_hosts: string; provider: Provider | null }[] = [];
  missing.forEach((domain, index) => {
    const verdict = found[index]!;
    verdicts.set(domain, verdict);
    if (verdict.outcome !== "dns_error") fresh.push({ domain, outcome: verdict.outcome, mx_hosts: JSON.stringify(verdict.mxHosts), provider: domainProvider(domain, verdict) });
  });
  if (fresh.length > 0) {
    await rawBatch(d1, [
      sql`INSERT INTO email_domain_checks (domain, outcome, mx_hosts, checked_at, expires_at, provider, provider_expires_at)
          SELECT v.value ->> '$.domain', v.value ->> '$.outcome', v.value ->> '$.mx_hosts', ${now}, ${now + DOMAIN_TTL_MS},
                 v.value ->> '$.provider', ${now + PROVIDER_TTL_MS}
          FROM json_each(${jsonList(fresh)}) AS v WHERE true
          ON CONFLICT (domain) DO UPDATE SET outcome = excluded.outcome, mx_hosts = excluded.mx_hosts,
            checked_at = excluded.checked_at, expires_at = excluded.expires_at,
            provider = excluded.provider, provider_expires_at = excluded.provider_expires_at`,
    ]);
  }
  return verdicts;
}

/**
 * Each domain's provider (CONTRACT 23.3): the one cached within 7 days, else from its verdict (the
 * 24 h cache, or the resolver now; both cached by `domainVerdicts`). Null where DNS could not tell.
 */
export async function domainProviders(d1: D1Database, resolverUrl: string | null, domains: string[], now: number): Promise<Map<string, Provider | null>> {
  const providers = new Map<string, Provider | null>();
  if (domains.length === 0) return providers;
  const [cached] = await rawBatch(d1, [
    sql`SELECT domain, provider FROM email_domain_checks
        WHERE domain IN (SELECT value FROM json_each(${jsonList(domains)})) AND provider_expires_at > ${now}`,
  ]);
  for (const row of cached!) providers.set(String(row.domain), (row.provider as Provider | null) ?? null);
  const missing = domains.filter((domain) => !providers.has(domain));
  const verdicts = await domainVerdicts(d1, resolverUrl, missing, now);
  for (const domain of missing) {
    const verdict = verdicts.get(domain);
    providers.set(domain, verdict ? domainProvider(domain, verdict) : null);
  }
  return providers;
}

/**
 * The external verifier's answers for these addresses (CONTRACT 22's wire shape). A call that
 * fails, or an address it leaves out, answers "unknown": nothing is invented.
 */
async function askVerifier(verifier: NonNullable<VerifierSettings["verifier"]>, emails: string[]): Promise<Map<string, ExternalAnswer>> {
  const answers = new Map<string, ExternalAnswer>();
  for (let i = 0; i < emails.length; i += VERIFIER_BATCH) {
    const batch = emails.slice(i, i + VERIFIER_BATCH);
    try {
      const response = await fetch(verifier.url, {
        method: "POST",
        headers: { "Content-Type": "application/json", ...(verifier.key ? { Authorization: `Bearer ${verifier.key}` } : {}) },
        body: JSON.stringify({ emails: batch }),
        signal: AbortSignal.timeout(VERIFIER_TIMEOUT_MS),
      });
      if (!response.ok) throw new Error(`HTTP ${response.status}`);
      const body = (await response.json()) as { results?: { email?: unknown; result?: unknown; catch_all?: unknown }[] };
      for (const item of body.results ?? []) {
        if (typeof item.email !== "string") continue;
        const result = ["deliverable", "undeliverable", "risky", "unknown"].includes(String(item.result)) ? (item.result as ExternalAnswer["result"]) : "unknown";
        answers.set(item.email.trim().toLowerCase(), { result, catch_all: typeof item.catch_all === "boolean" ? item.catch_all : null });
      }
    } catch (error) {
      log("warn", "external email verifier failed", { addresses: batch.length, error: error instanceof Error ? error.message : String(error) });
    }
  }
  for (const email of emails) if (!answers.has(email)) answers.set(email, { result: "unknown", catch_all: null, unanswered: true });
  return answers;
}

/**
 * Verifies addresses (in the given order, one Result each): spelling, lists and DNS always; the
 * external verifier, when configured and `external` is not false, for those DNS left standing.
 */
export async function verifyAddresses(
  d1: D1Database,
  settings: VerifierSettings,
  emails: string[],
  now = Date.now(),
  options: { external?: boolean } = {},
): Promise<VerificationResult[]> {
  const parsed = emails.map(parseAddress);
  const domains = [...new Set(parsed.flatMap((address) => (address.asciiDomain ? [address.asciiDomain] : [])))];
  const verdicts = await domainVerdicts(d1, settings.resolverUrl, domains, now);
  let external = new Map<string, ExternalAnswer>();
  if (settings.verifier && options.external !== false) {
    const standing = parsed.filter((address) => {
      const outcome = address.asciiDomain ? verdicts.get(address.asciiDomain)?.outcome : undefined;
      return outcome === "mx" || outcome === "a" || outcome === "dns_error";
    });
    external = await askVerifier(settings.verifier, [...new Set(standing.map((address) => address.email))]);
  }
  const checkedAt = new Date(now);
  return parsed.map((address) =>
    classify(address, address.asciiDomain ? (verdicts.get(address.asciiDomain) ?? null) : null, external.get(address.email) ?? null, checkedAt),
  );
}
