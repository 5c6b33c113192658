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

/** A request refused while its account is copied to another shard is asked again this soon (Retry-After). */
export const MOVE_RETRY_SECONDS = 5;

/**
 * A batch refused by a move's fence (its account is being copied to another shard) is asked again
 * later, at growing intervals: 1, 2, 4, 8, 16, 32 minutes, then every hour, where the platform's own
 * retries come at once and would run out within the pause. The tracking queue, whose messages are a
 * hit's only copy, keeps a message for 12 of these (about 7 hours; wrangler.toml).
 */
export function afterTheMove(attempts: number): number {
  return Math.min(60 * 2 ** Math.max(0, attempts - 1), 3_600);
}
