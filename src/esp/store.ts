/**
 * Provider matching's SQL pieces (CONTRACT 23.3), for the engine's claims and `sending_status`:
 * a mailbox's provider as a column expression (the SQL twin of `providerOfMailbox`), and whether a
 * campaign's stored settings turn matching on (the twin of `espMatchingOn`).
 */
import { sql, type SQL } from "drizzle-orm";

/** `providerOfMailbox` over an `email_accounts` row aliased `alias`: its type, else its domain's learned provider. */
export function mailboxProviderSql(alias: string): SQL {
  const a = sql.raw(alias);
  return sql`(CASE ${a}.type WHEN 'GMAIL' THEN 'google' WHEN 'OUTLOOK' THEN 'microsoft' ELSE ${a}.esp_provider END)`;
}

/** True in SQL when the settings JSON (a `campaigns.settings` value) has `enable_ai_esp_matching` on. */
export function espMatchingSql(settings: SQL): SQL {
  return sql`(coalesce(json_extract(${settings}, '$.stored.enable_ai_esp_matching'), 0) IN (1, 'true'))`;
}
