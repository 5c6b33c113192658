import { openedRows, openStatement, type ClaimedRecord } from "../../src/engine/store";
import { rawBatch } from "../../src/platform/sql";

/**
 * Opens a claimed record's message as a pass does right before its SMTP transaction (what a pass
 * that dies in that transaction leaves behind); answers the row's id, or null when it may not open.
 */
export async function openMessage(
  d1: D1Database,
  claim: { nonce: string; mailboxId: number; now: number },
  record: Pick<ClaimedRecord, "recordId" | "step" | "messageId" | "leadEmail">,
): Promise<number | null> {
  const [rows] = await rawBatch(d1, [openStatement(claim, [record])]);
  return openedRows(rows).get(record.recordId) ?? null;
}
