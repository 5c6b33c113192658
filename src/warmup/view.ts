import type { WarmupConfig } from "../config";
import type { Database } from "../platform/db";
import { dailyTarget, isWeekend, minCountOf, reputation, sendingDaysSince, warmupState, zonedDay, type WarmupState } from "./rules";
import { poolMembers, warmupCounters, type WarmupCounters } from "./store";

/** The mailbox's columns warmup reads. */
export interface WarmupRow {
  id: number;
  accountId: number;
  maxEmailPerDay: number;
  isSuspended: boolean;
  isSmtpSuccess: boolean | null;
  isImapSuccess: boolean | null;
  disconnectCode: string | null;
  warmupEnabled: boolean;
  totalWarmupPerDay: number;
  dailyRampup: number;
  autoAdjustWarmup: boolean;
  isRampupEnabled: boolean;
  warmupMinCount: number | null;
  sendWarmupsOnlyOnWeekdays: boolean;
  warmupEnabledAt: Date | null;
  warmupBlockedReason: string | null;
  warmupBouncedReason: string | null;
}
type Row = WarmupRow;

/** What `warmup_details` shows of a mailbox's running warmup (CONTRACT 19.2). */
export interface WarmupView {
  counters: WarmupCounters;
  reputation: number | null;
  state: WarmupState;
  poolSize: number;
  todayTarget: number;
}

/** The day's target as the mailbox's object plans it (0 when it sends no warmup today). */
export function targetOf(row: Row, settings: WarmupConfig, now: number, campaignToday: number, state: WarmupState): number {
  if (state !== "warming") return 0;
  return dailyTarget({
    mailboxId: row.id,
    day: zonedDay(now, settings.timeZone),
    minCount: minCountOf(row.warmupMinCount, row.totalWarmupPerDay),
    maxCount: row.totalWarmupPerDay,
    rampupEnabled: row.isRampupEnabled,
    dailyRampup: row.dailyRampup,
    sendingDays: sendingDaysSince(row.warmupEnabledAt?.getTime() ?? now, now, row.sendWarmupsOnlyOnWeekdays, settings.timeZone),
    weekend: isWeekend(now, settings.timeZone),
    weekdaysOnly: row.sendWarmupsOnlyOnWeekdays,
    autoAdjust: row.autoAdjustWarmup,
    maxEmailPerDay: row.maxEmailPerDay,
    campaignToday,
  });
}

/** The state of a mailbox in a pool of `poolSize` members. */
export function stateOf(row: Row, settings: WarmupConfig, now: number, poolSize: number): WarmupState {
  return warmupState({ ...row, poolSize, weekend: row.sendWarmupsOnlyOnWeekdays && isWeekend(now, settings.timeZone) });
}

/** Each mailbox's view, given what it sent today (campaign mail, for auto-adjust). */
export async function warmupViews(db: Database, settings: WarmupConfig, rows: Row[], campaignToday: Map<number, number>, now: number, dayStart: number): Promise<Map<number, WarmupView>> {
  const counters = await warmupCounters(db, rows.map((r) => r.id), now, dayStart);
  const pools = new Map<number, number>();
  for (const accountId of new Set(rows.filter((r) => r.warmupEnabled).map((r) => r.accountId))) {
    pools.set(accountId, (await poolMembers(db, settings.poolScope, accountId)).length);
  }
  return new Map(
    rows.map((row) => {
      const poolSize = pools.get(row.accountId) ?? 0;
      const state = stateOf(row, settings, now, poolSize);
      const c = counters.get(row.id)!;
      return [row.id, { counters: c, reputation: reputation(c.inbox, c.observed), state, poolSize, todayTarget: targetOf(row, settings, now, campaignToday.get(row.id) ?? 0, state) }];
    }),
  );
}
