/** D1 reports constraint failures only through the message text. */
export function isUniqueViolation(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
  return text.includes("UNIQUE constraint failed");
}

/** What a move's fence (src/moves/) answers a write to an account being moved. */
export const ACCOUNT_MOVING = "salvo: account moving";

/** A write refused by a move's fence: the account is being copied to another shard, and the write is to be retried shortly. */
export function isAccountMoving(error: unknown): boolean {
  const text = error instanceof Error ? `${error.message} ${String(error.cause ?? "")}` : String(error);
  return text.includes(ACCOUNT_MOVING);
}
