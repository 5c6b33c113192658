/**
 * Learning providers in the background (CONTRACT 23.3): each lead's and each mailbox's email
 * provider from its domain's MX, through list hygiene's resolver and its per-domain cache
 * (`domainProviders`: a domain's provider kept 7 days, so a list of 10,000 leads at one company
 * asks once). Never in a request's path: an upload only stores leads, their provider is null (and
 * `esp_domain_type` 0) until the minute cron's pass here learns it, and ESP matching treats them
 * as unknown meanwhile (normal rotation). Setting `leads.email_provider` copies it to the lead's
 * records by trigger (migration 0079), where the engine's claims read it.
 */
import { sql } from "drizzle-orm";
import { config } from "../config";
import { providerOfMailbox, type Provider } from "../esp/rules";
import type { Bindings } from "../platform/env";
import { jsonList, rawBatch } from "../platform/sql";
import { domainProviders } from "./check";
import { parseAddress } from "./rules";
import { notMoving } from "../platform/moving";

/** Leads per round: one read, their distinct domains' lookups, one write. */
const ROUND = 500;
/** How long one pass works before it leaves the rest to the next minute. */
const PASS_BUDGET_MS = 20_000;
/** A lead or mailbox whose provider DNS could not tell is looked up again after this long. */
export const PROVIDER_RETRY_MS = 86_400_000;

interface Pending {
  id: number;
  email: string;
  type?: string;
}

async function learnRound(d1: D1Database, resolverUrl: string, table: "leads" | "email_accounts", now: number): Promise<number> {
  const cutoff = now - PROVIDER_RETRY_MS;
  const [rows] = await rawBatch(d1, [
    table === "leads"
      ? sql`SELECT id, email FROM leads WHERE email_provider IS NULL AND esp_checked_at < ${cutoff} AND ${notMoving(sql`account_id`)} ORDER BY esp_checked_at LIMIT ${ROUND}`
      : sql`SELECT id, from_email AS email, type FROM email_accounts WHERE esp_provider IS NULL AND esp_checked_at < ${cutoff} AND ${notMoving(sql`account_id`)} ORDER BY esp_checked_at LIMIT ${ROUND}`,
  ]);
  const pending = rows! as unknown as Pending[];
  if (pending.length === 0) return 0;
  const domainOf = new Map(pending.map((row) => [row.id, parseAddress(String(row.email)).asciiDomain]));
  // A GMAIL or OUTLOOK mailbox's provider is its type's: no lookup.
  const asked = pending.filter((row) => row.type !== "GMAIL" && row.type !== "OUTLOOK");
  const domains = [...new Set(asked.flatMap((row) => (domainOf.get(row.id) ? [domainOf.get(row.id)!] : [])))];
  const providers = await domainProviders(d1, resolverUrl, domains, now);
  const learned = pending.map((row) => {
    const domain = domainOf.get(row.id);
    const provider: Provider | null = domain ? (providers.get(domain) ?? null) : null;
    return { id: row.id, provider: table === "leads" ? provider : providerOfMailbox(String(row.type), provider) };
  });
  const column = sql.raw(table === "leads" ? "email_provider" : "esp_provider");
  await rawBatch(d1, [
    sql`UPDATE ${sql.raw(table)} SET ${column} = v.value ->> '$.provider', esp_checked_at = ${now}
        FROM json_each(${jsonList(learned)}) AS v WHERE ${sql.raw(table)}.id = v.value ->> '$.id'`,
  ]);
  return pending.length;
}

/**
 * Minute job: learns the providers of mailboxes, then leads, never looked up (or whose lookup
 * could not tell, a day ago or more), round after round within the pass's budget. Nothing
 * without a configured resolver (`DNS_RESOLVER_URL`): providers then stay unknown.
 */
export async function learnProviders(env: Bindings, at: Date, budgetMs = PASS_BUDGET_MS): Promise<number> {
  const resolverUrl = config(env).dnsResolverUrl;
  if (resolverUrl === null) return 0;
  const started = Date.now();
  let learned = 0;
  for (const table of ["email_accounts", "leads"] as const) {
    for (;;) {
      const count = await learnRound(env.DB, resolverUrl, table, at.getTime());
      learned += count;
      if (count < ROUND || Date.now() - started >= budgetMs) break;
    }
  }
  return learned;
}
