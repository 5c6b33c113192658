import { sql } from "drizzle-orm";
import type { Database } from "../platform/db";
import { mailboxSends } from "../mailboxes/sends";
import type { MailboxLogins } from "../mailboxes/login";
import { DAY_MS } from "../warmup/rules";
import type { WarmupDoor } from "../warmup/send";
import { heldMessage, heldNow, holdStatement, sendHold } from "../mailboxes/hold";

/** What the mailbox's object lends its warmup pass: the mailbox's login and its day (src/mailboxes/sends.ts, the one definition). */
export function warmupDoor(db: Database, logins: MailboxLogins): WarmupDoor {
  return {
    async smtp(mailbox, now) {
      const login = await logins.for(mailbox, "smtp", now);
      if (!login.ok) return null;
      return {
        session: logins.smtpSession(mailbox, login.credential),
        refused: async (text) => void (await logins.refused(mailbox, "smtp", login, text, now)),
        // Its server's refusal holds the mailbox's campaign sending too (the limit is the mailbox's), as a campaign's does.
        hold(failure) {
          const hold = sendHold(failure, now);
          return hold === null ? null : { until: hold.until, statement: holdStatement(mailbox.id, hold, now) };
        },
      };
    },
    held(mailbox, now) {
      const hold = heldNow(mailbox, now);
      return hold === null ? null : { until: hold.until, message: heldMessage(hold) };
    },
    async day(mailbox, now) {
      const sends = mailboxSends(sql`${mailbox.id}`, sql`${mailbox.accountId}`, now - (now % DAY_MS));
      const row = await db.select({ sentToday: sends.sentToday, capToday: sends.capToday, lastSentAt: sends.lastSentAt }).from(sql`(SELECT 1)`).get();
      return { campaignToday: Number(row?.sentToday ?? 0), capToday: Number(row?.capToday ?? 0), lastSentAt: row?.lastSentAt == null ? null : Number(row.lastSentAt) };
    },
  };
}
