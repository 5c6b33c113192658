import { sql, type SQL } from "drizzle-orm";

/**
 * Whether an address, or its domain, is on the account's block list for a client scope (account-wide
 * entries count for every client): the one rule the engine's claims and every manual send share.
 * One seek of `block_list_account_scope_value_idx` per scope.
 */
export function blockListed(accountId: number, clientId: number | null, email: SQL): SQL {
  return sql`EXISTS (SELECT 1 FROM block_list b WHERE b.account_id = ${accountId} AND coalesce(b.client_id, 0) IN (0, ${clientId ?? 0})
    AND b.email_or_domain IN (${email}, substr(${email}, instr(${email}, '@') + 1)))`;
}

/** The states a block-list entry takes a record out of: every one that is not final. */
export const BLOCKABLE_STATES = ["DRAFTED", "STARTED", "INPROGRESS", "PAUSED"] as const;

export const BLOCK_LIST_SOURCES = ["manual", "bounce", "complaint", "invalid"] as const;

const ADDRESS = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DOMAIN = /^(?=.{1,253}$)(?:[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z0-9-]*[a-z][a-z0-9-]*$/;

/**
 * A block-list item as stored, or null when it is neither an address nor a domain. An item with `@` is
 * an address (trimmed, lower-cased); anything else a domain: lower-cased, a scheme, `www.`, a path and
 * a port dropped, international names in their ASCII (punycode) form.
 */
export function blockListValue(item: string): string | null {
  const value = item.trim().toLowerCase();
  if (value.includes("@")) return value.length <= 254 && ADDRESS.test(value) ? value : null;
  const host = value.replace(/^[a-z][a-z0-9+.-]*:\/\//, "").split(/[/?#]/)[0]!.replace(/:\d+$/, "");
  let ascii: string;
  try {
    ascii = new URL(`http://${host}`).hostname;
  } catch {
    return null;
  }
  const domain = ascii.replace(/^www\./, "").replace(/\.$/, "");
  return DOMAIN.test(domain) ? domain : null;
}
