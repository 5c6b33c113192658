import { sql, type SQL } from "drizzle-orm";

/**
 * True for the rows of accounts no move has fenced on this shard (src/moves/). A cron job's statement
 * that writes rows of many accounts aborts as a whole when one of them is fenced, so every other
 * account's due work would wait for the move; jobs pick their due rows with this condition instead,
 * and the moving account's rows are done after the move, on its new shard. The table is empty but
 * while a move runs: one probe.
 */
export function notMoving(accountId: SQL): SQL {
  return sql`${accountId} NOT IN (SELECT account_id FROM account_moves WHERE open = 0)`;
}
