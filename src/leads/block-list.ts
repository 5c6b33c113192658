import { sql, type SQL } from "drizzle-orm";

/**
 * Whether an address, or its domain, is on the account's block list for a client scope (account-wide
 * entries count for every client): the one rule the engine's claims and replies from the inbox share.
 * One seek of `block_list_account_scope_value_idx` per scope.
 */
export function blockListed(accountId: number, clientId: number | null, email: SQL): SQL {
  return sql`EXISTS (SELECT 1 FROM block_list b WHERE b.account_id = ${accountId} AND coalesce(b.client_id, 0) IN (0, ${clientId ?? 0})
    AND b.email_or_domain IN (${email}, substr(${email}, instr(${email}, '@') + 1)))`;
}
