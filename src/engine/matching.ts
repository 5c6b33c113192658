import { sql, type SQL } from "drizzle-orm";
import { PROVIDERS } from "../esp/rules";
import { mailboxProviderSql } from "../esp/store";
import { utcDayStart } from "../mailboxes/rules";
import { mailboxSends } from "../mailboxes/sends";

/**
 * ESP matching in the engine's claims (CONTRACT 23.3). With the campaign's `enable_ai_esp_matching`
 * on, a mailbox's pass takes the campaign's unpinned due records (first sends) whose recipient is on
 * its own provider, and those whose provider no usable attached mailbox with room today serves (or
 * is not known): so each first send is pinned to a mailbox of its recipient's provider while one
 * has room, the mailboxes of a provider taking turns as their passes come, and a record never waits
 * for a match. Each provider is one range of `campaign_leads_esp_due_idx` (campaign, the lead's
 * provider copied on the record, due time), read in due order and cut at the claim's limit: a pass
 * reads at most four short ranges, never a scan (INDEXED BY: the planner would otherwise walk
 * `campaign_leads_due_idx` for the unknown-provider range, every unpinned due record when none is
 * unknown). Follow-ups keep the pin the first send set.
 */

/** How long a mailbox with nothing of its own waits before it looks again at due first sends another provider's mailboxes have room for. */
export const MATCH_RECHECK_MS = 10 * 60_000;

/**
 * Providers of the campaign's usable attached mailboxes with room on `now`'s UTC day (as the sender's
 * cap counts). A mailbox its server holds (src/mailboxes/hold.ts) has no room until the hold ends:
 * its provider's first sends go to the other mailboxes meanwhile rather than wait for it.
 */
function roomyProviders(campaignId: number, now: number): SQL {
  const sends = mailboxSends(sql`ea.id`, sql`ea.account_id`, utcDayStart(now));
  return sql`SELECT ${mailboxProviderSql("ea")} FROM campaign_email_accounts cea JOIN email_accounts ea ON ea.id = cea.email_account_id
    WHERE cea.campaign_id = ${campaignId} AND ea.is_suspended = 0 AND ea.is_smtp_success = 1 AND ea.is_imap_success IS NOT 0
      AND ea.disconnect_code IS NULL AND ${mailboxProviderSql("ea")} IS NOT NULL AND ${sends.capToday} < ea.max_email_per_day
      AND coalesce(ea.send_held_until, 0) <= ${now}`;
}

export interface OpenRecords {
  campaignId: number;
  mailboxId: number;
  now: number;
  /** Further conditions on the records (due now and live, or merely due some time). */
  where: SQL;
  /** Rows per provider arm. */
  limit: SQL;
}

/**
 * `SELECT id, due_at` of the unpinned records this mailbox may take under matching (`allowed`: its
 * provider's, those of a provider no mailbox with room serves, unknown ones), or of those it leaves
 * to another provider's mailboxes with room (`elsewhere`). Up to `limit` rows per provider.
 */
export function matchedOpenRecords(open: OpenRecords, side: "allowed" | "elsewhere"): SQL {
  const mine = sql`(SELECT ${mailboxProviderSql("m")} FROM email_accounts m WHERE m.id = ${open.mailboxId})`;
  const roomy = roomyProviders(open.campaignId, open.now);
  const arm = (provider: SQL, gate: SQL) =>
    sql`SELECT id, due_at FROM (SELECT id, due_at FROM campaign_leads INDEXED BY campaign_leads_esp_due_idx
          WHERE campaign_id = ${open.campaignId} AND email_account_id IS NULL AND ${provider} AND ${open.where}
          ORDER BY due_at LIMIT ${open.limit}) WHERE ${gate}`;
  const arms = PROVIDERS.map((provider) => {
    const allowed = sql`(coalesce(${provider} = ${mine}, 0) OR ${provider} NOT IN (${roomy}))`;
    return arm(sql`esp_provider = ${provider}`, side === "allowed" ? allowed : sql`NOT ${allowed}`);
  });
  if (side === "allowed") arms.push(arm(sql`esp_provider IS NULL`, sql`1`));
  return sql.join(arms, sql` UNION ALL `);
}
