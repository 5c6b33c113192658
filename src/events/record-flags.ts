import type { RecordFlags } from "./rules";

/** The has_* columns of campaign_leads as SQLite hands them back (0 or 1). */
export interface RecordFlagColumns {
  has_sent: number;
  has_opened: number;
  has_clicked: number;
  has_replied: number;
  has_bounced: number;
  has_unsubscribed: number;
}

export function recordFlags(row: RecordFlagColumns): RecordFlags {
  return {
    hasSent: row.has_sent === 1,
    hasOpened: row.has_opened === 1,
    hasClicked: row.has_clicked === 1,
    hasReplied: row.has_replied === 1,
    hasBounced: row.has_bounced === 1,
    hasUnsubscribed: row.has_unsubscribed === 1,
  };
}
