/**
 * Warmup's pure rules (CONTRACT 19): who is in the pool, the day's target, when the day's sends go,
 * which partners receive them, which messages are answered, and the state a mailbox shows. No I/O:
 * the store feeds them facts and the mailbox's object acts on what they decide.
 */
import { stableFraction, stableHash } from "../sequences/hash";
import { zoneOffset, zonedInstant } from "../platform/zoned-time";

export const DAY_MS = 86_400_000;
/** Warmup mail goes between these hours of WARMUP_TIME_ZONE. */
export const SEND_FROM_HOUR = 8;
export const SEND_UNTIL_HOUR = 20;
/** A warmup email no receiver has found this long after its send is `not_found`. */
export const NOT_FOUND_AFTER_MS = DAY_MS;
/** Under this many observations in 7 days, `warmup_reputation` is null. */
export const REPUTATION_MIN_OBSERVATIONS = 10;
/** Blocking (19.4, inferred): policy rejections in a UTC day, or hard bounces in 7 days. */
export const BLOCK_POLICY_REJECTIONS = 3;
export const BLOCK_HARD_BOUNCES = 3;

export type WarmupState = "off" | "warming" | "weekend" | "waiting_for_pool" | "out_of_pool" | "blocked";

/** What makes a mailbox a pool member (19.4); the store's SQL says the same (`memberCondition`). */
export interface MemberFacts {
  warmupEnabled: boolean;
  isSuspended: boolean;
  isSmtpSuccess: boolean | null;
  isImapSuccess: boolean | null;
  disconnectCode: string | null;
  warmupBlockedReason: string | null;
  warmupBouncedReason: string | null;
}

/** Warmup on, not suspended, not blocked, connected (both checks passed), and its address not bouncing. */
export function isPoolMember(m: MemberFacts): boolean {
  return (
    m.warmupEnabled &&
    !m.isSuspended &&
    m.warmupBlockedReason === null &&
    m.warmupBouncedReason === null &&
    m.isSmtpSuccess === true &&
    m.isImapSuccess === true &&
    !m.disconnectCode
  );
}

/** The pool a mailbox's account belongs to: its own, or the deployment's shared one when both the var and the account's flag say so. */
export function poolKey(scope: "account" | "deployment", accountId: number, sharedPool: boolean): string {
  return scope === "deployment" && sharedPool ? "deployment" : `account:${accountId}`;
}

/** The state `warmup_details.state` shows. */
export function warmupState(facts: MemberFacts & { poolSize: number; weekend: boolean }): WarmupState {
  if (!facts.warmupEnabled) return "off";
  if (facts.warmupBlockedReason !== null) return "blocked";
  if (!isPoolMember(facts)) return "out_of_pool";
  if (facts.poolSize < 2) return "waiting_for_pool";
  if (facts.weekend) return "weekend";
  return "warming";
}

/** `warmup_min_count` when none is stored: the bulk page's max(1, total - 5). */
export function minCountOf(stored: number | null, total: number): number {
  return Math.min(stored ?? Math.max(1, total - 5), total);
}

/** Whether `at` falls on a Saturday or Sunday in the zone. */
export function isWeekend(at: number, timeZone: string): boolean {
  const day = new Date(at + zoneOffset(at, timeZone)).getUTCDay();
  return day === 0 || day === 6;
}

/** Midnight (as if UTC) of the zone's calendar day holding `at`. */
export function zonedDay(at: number, timeZone: string): number {
  const wall = at + zoneOffset(at, timeZone);
  return wall - (((wall % DAY_MS) + DAY_MS) % DAY_MS);
}

/**
 * n of the ramp: the sending days from the day warmup was turned on to the day of `now`, both
 * included (weekends left out when warmup sends on weekdays only). 1 on the first day.
 */
export function sendingDaysSince(enabledAt: number, now: number, weekdaysOnly: boolean, timeZone: string): number {
  const first = zonedDay(enabledAt, timeZone);
  const today = zonedDay(now, timeZone);
  if (today < first) return 1;
  const days = Math.round((today - first) / DAY_MS) + 1;
  if (!weekdaysOnly) return days;
  let n = 0;
  for (let day = first; day <= today; day += DAY_MS) {
    const weekday = new Date(day).getUTCDay();
    if (weekday !== 0 && weekday !== 6) n++;
  }
  return Math.max(n, 1);
}

export interface TargetInput {
  mailboxId: number;
  /** The zone's calendar day (midnight as if UTC), the seed of the day's draw. */
  day: number;
  minCount: number;
  maxCount: number;
  rampupEnabled: boolean;
  dailyRampup: number;
  /** n: sending days since warmup was turned on (`sendingDaysSince`). */
  sendingDays: number;
  weekend: boolean;
  weekdaysOnly: boolean;
  autoAdjust: boolean;
  maxEmailPerDay: number;
  /** Campaign mail the mailbox sends today: what it has sent and what is still due within its cap. */
  campaignToday: number;
}

/**
 * The day's warmup target (19.4): drawn stably in [min, max] per mailbox and day; capped at
 * `daily_rampup` × n while ramping; 0 on a weekend when weekdays-only; with auto-adjust, shrunk so
 * campaign and warmup mail stay within the cap, never below 1.
 */
export function dailyTarget(input: TargetInput): number {
  if (input.weekdaysOnly && input.weekend) return 0;
  const low = Math.max(1, Math.min(input.minCount, input.maxCount));
  const high = Math.max(low, input.maxCount);
  let target = low + Math.floor(stableFraction(`warmup-target:${input.mailboxId}:${input.day}`) * (high - low + 1));
  if (input.rampupEnabled && input.dailyRampup > 0) target = Math.min(target, input.dailyRampup * input.sendingDays);
  if (input.autoAdjust) target = Math.min(target, Math.max(1, input.maxEmailPerDay - input.campaignToday));
  return Math.max(target, 1);
}

/**
 * When the day's sends go: `count` instants spread over 08:00-20:00 of the zone's day, one in each
 * equal slot at a stable offset inside it (so two mailboxes do not send in step), ascending.
 */
export function sendTimes(mailboxId: number, day: number, count: number, timeZone: string): number[] {
  if (count <= 0) return [];
  const start = zonedInstant(day + SEND_FROM_HOUR * 3_600_000, timeZone);
  const end = zonedInstant(day + SEND_UNTIL_HOUR * 3_600_000, timeZone);
  const slot = (end - start) / count;
  return Array.from({ length: count }, (_, i) => Math.floor(start + slot * i + slot * 0.8 * stableFraction(`warmup-slot:${mailboxId}:${day}:${i}`)));
}

/**
 * Outside the hours warmup mail goes (08:00-20:00 of the zone), when they next open; null inside them.
 * First emails and replies alike: a pass that comes late (its object was down, a hold ended at night)
 * sends what is left of the day only while the hours last, and a slot still unsent at 20:00 is not
 * sent, so no mailbox sends warmup mail at night.
 */
export function nextWindowOpening(now: number, timeZone: string): number | null {
  const day = zonedDay(now, timeZone);
  const opens = zonedInstant(day + SEND_FROM_HOUR * 3_600_000, timeZone);
  if (now < opens) return opens;
  if (now < zonedInstant(day + SEND_UNTIL_HOUR * 3_600_000, timeZone)) return null;
  return zonedInstant(day + DAY_MS + SEND_FROM_HOUR * 3_600_000, timeZone);
}

export interface Partner {
  id: number;
  /** The provider (`GMAIL`, `OUTLOOK`, or the mail host for others) and the address's domain. */
  provider: string;
  domain: string;
}

/**
 * The receivers of a mailbox's next `count` warmup emails of the day: other pool members, each at most
 * once a day while the pool allows (then round again), preferring another provider and domain two to
 * one. Stable per mailbox and day, so a pass that runs again picks the same; those `mailed` already
 * today come after every other member, so a member that joins (or leaves) the pool during the day
 * moves nobody into a second email while others have had none.
 */
export function choosePartners(self: Partner, members: readonly Partner[], count: number, day: number, mailed: readonly number[] = []): number[] {
  const others = members.filter((m) => m.id !== self.id);
  if (others.length === 0 || count <= 0) return [];
  // Each member's key hashed once (a pool of 1,000 sorts in well under a millisecond).
  const order = (list: Partner[]) =>
    list
      .map((m) => ({ m, key: stableHash(`warmup-pair:${self.id}:${day}:${m.id}`) }))
      .sort((a, b) => a.key - b.key || a.m.id - b.m.id)
      .map((entry) => entry.m);
  const far = order(others.filter((m) => m.provider !== self.provider || m.domain !== self.domain));
  const near = order(others.filter((m) => m.provider === self.provider && m.domain === self.domain));
  // Interleave two far for one near while both last, then whatever is left: each member once per round.
  const round: number[] = [];
  while (far.length > 0 || near.length > 0) {
    for (let k = 0; k < 2 && far.length > 0; k++) round.push(far.shift()!.id);
    if (near.length > 0) round.push(near.shift()!.id);
  }
  const before = new Set(mailed);
  const fresh = [...round.filter((id) => !before.has(id)), ...round.filter((id) => before.has(id))];
  return Array.from({ length: count }, (_, i) => fresh[i % fresh.length]!);
}

/** Whether the receiver answers this warmup email: the share `rate` percent, by a stable hash of its Message-ID. */
export function answers(messageId: string, rate: number): boolean {
  return stableHash(`warmup-reply:${messageId}`) % 100 < rate;
}

/** `warmup_reputation`: the inbox share (0-100) of warmup mail observed in the last 7 days; null under 10 observations. */
export function reputation(inbox: number, observed: number): number | null {
  return observed < REPUTATION_MIN_OBSERVATIONS ? null : Math.round((100 * inbox) / observed);
}

/** The 7-day spam share in percent (0 with nothing observed). */
export function spamShare(spam: number, observed: number): number {
  return observed === 0 ? 0 : (100 * spam) / observed;
}

/** A refusal's kind: a policy rejection (5.7.x other than authentication), a hard bounce (other 5xx), or a passing fault. */
export function refusalKind(code: number | null, text: string): "policy" | "bounce" | "other" {
  if (code === null || code < 500) return "other";
  const enhanced = /\b5\.(\d{1,3})\.(\d{1,3})\b/.exec(text);
  // 5.7.8 and 5.7.9 are the server refusing our login, not a policy about our mail.
  if (enhanced && enhanced[1] === "7" && !["8", "9"].includes(enhanced[2]!)) return "policy";
  return "bounce";
}

/** The provider a pool member counts as for spreading: its type when it names one, else its SMTP host's registrable tail. */
export function providerOf(type: string, smtpHost: string): string {
  if (type === "GMAIL" || type === "OUTLOOK" || type === "ZOHO") return type;
  return smtpHost.toLowerCase().split(".").slice(-2).join(".");
}

export interface WarmupWarning {
  code: "warmup_spam_high" | "warmup_blocked" | "warmup_waiting_for_pool";
  message: string;
}

/**
 * The warmup warnings of a mailbox's `sending_status` (19.4): its warmup mail of the last 7 days in
 * spam at least `warnPercent` of the time (with at least 10 observations, reputation's floor), a
 * block (with the servers' words), or a pool too small to send in.
 */
export function warmupWarnings(facts: { state: WarmupState; spam: number; observed: number; warnPercent: number; blockedReason: string | null }): WarmupWarning[] {
  const warnings: WarmupWarning[] = [];
  const share = spamShare(facts.spam, facts.observed);
  if (facts.observed >= REPUTATION_MIN_OBSERVATIONS && share >= facts.warnPercent) {
    warnings.push({
      code: "warmup_spam_high",
      message: `${Math.round(share)}% of this mailbox's warmup mail of the last 7 days (${facts.spam} of ${facts.observed}) landed in spam: check its SPF, DKIM and DMARC, and lower its volume.`,
    });
  }
  if (facts.state === "blocked") warnings.push({ code: "warmup_blocked", message: `Warmup is blocked: ${facts.blockedReason ?? "servers refused its mail"}. Turn warmup off and on, or unblock it with the OTP routes.` });
  if (facts.state === "waiting_for_pool") warnings.push({ code: "warmup_waiting_for_pool", message: "Warmup waits for a second mailbox in its pool: turn warmup on for another connected mailbox." });
  return warnings;
}
