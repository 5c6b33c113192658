import { describe, expect, it } from "vitest";
import { newWarmupKey, warmupEmail, warmupReply } from "../../src/warmup/corpus";
import { listedFolders, spamFolder } from "../../src/warmup/receive";
import {
  DAY_MS,
  answers,
  choosePartners,
  dailyTarget,
  isPoolMember,
  isWeekend,
  minCountOf,
  nextWindowOpening,
  poolKey,
  refusalKind,
  reputation,
  sendTimes,
  sendingDaysSince,
  warmupState,
  warmupWarnings,
  zonedDay,
  type MemberFacts,
  type Partner,
  type TargetInput,
} from "../../src/warmup/rules";

const member: MemberFacts = {
  warmupEnabled: true,
  isSuspended: false,
  isSmtpSuccess: true,
  isImapSuccess: true,
  disconnectCode: null,
  warmupBlockedReason: null,
  warmupBouncedReason: null,
};

// 2026-11-23 is a Monday.
const MONDAY = Date.UTC(2026, 10, 23);

describe("the pool", () => {
  it("admits a mailbox with warmup on, connected, not suspended, blocked or bouncing", () => {
    expect(isPoolMember(member)).toBe(true);
    for (const change of [
      { warmupEnabled: false },
      { isSuspended: true },
      { isSmtpSuccess: false },
      { isSmtpSuccess: null },
      { isImapSuccess: false },
      { isImapSuccess: null },
      { disconnectCode: "invalid_grant" },
      { warmupBlockedReason: "550 5.7.1 blocked" },
      { warmupBouncedReason: "550 5.1.1 no such user" },
    ]) {
      expect(isPoolMember({ ...member, ...change }), JSON.stringify(change)).toBe(false);
    }
  });

  it("pools each account apart unless the deployment scope and the account's flag both say share", () => {
    expect(poolKey("account", 4, true)).toBe("account:4");
    expect(poolKey("deployment", 4, false)).toBe("account:4");
    expect(poolKey("deployment", 4, true)).toBe(poolKey("deployment", 9, true));
  });

  it("shows the state: off, blocked, out of the pool, waiting for a pool, weekend, warming", () => {
    const at = { poolSize: 5, weekend: false };
    expect(warmupState({ ...member, ...at, warmupEnabled: false })).toBe("off");
    expect(warmupState({ ...member, ...at, warmupBlockedReason: "x" })).toBe("blocked");
    expect(warmupState({ ...member, ...at, isSmtpSuccess: false })).toBe("out_of_pool");
    expect(warmupState({ ...member, ...at, poolSize: 1 })).toBe("waiting_for_pool");
    expect(warmupState({ ...member, ...at, weekend: true })).toBe("weekend");
    expect(warmupState({ ...member, ...at })).toBe("warming");
  });
});

describe("the daily plan", () => {
  const base: TargetInput = {
    mailboxId: 7,
    day: MONDAY,
    minCount: 5,
    maxCount: 20,
    rampupEnabled: false,
    dailyRampup: 0,
    sendingDays: 1,
    weekend: false,
    weekdaysOnly: false,
    autoAdjust: false,
    maxEmailPerDay: 100,
    campaignToday: 0,
  };

  it("defaults the minimum to max(1, total - 5), never above the total", () => {
    expect(minCountOf(null, 20)).toBe(15);
    expect(minCountOf(null, 3)).toBe(1);
    expect(minCountOf(8, 6)).toBe(6);
  });

  it("draws a stable target within [min, max], spread across days", () => {
    const targets = Array.from({ length: 60 }, (_, i) => dailyTarget({ ...base, day: MONDAY + i * DAY_MS }));
    expect(targets.every((t) => t >= 5 && t <= 20)).toBe(true);
    expect(new Set(targets).size).toBeGreaterThan(5);
    expect(dailyTarget(base)).toBe(dailyTarget(base));
  });

  it("ramps: at most daily_rampup × n on the n-th sending day", () => {
    const ramp = { ...base, minCount: 20, maxCount: 20, rampupEnabled: true, dailyRampup: 3 };
    expect([1, 2, 3, 4, 5, 6, 7, 8].map((n) => dailyTarget({ ...ramp, sendingDays: n }))).toEqual([3, 6, 9, 12, 15, 18, 20, 20]);
    expect(dailyTarget({ ...ramp, rampupEnabled: false, sendingDays: 1 })).toBe(20);
  });

  it("counts sending days from the day warmup was turned on, weekends left out when weekdays only", () => {
    const friday = MONDAY - 3 * DAY_MS + 15 * 3_600_000;
    expect(sendingDaysSince(friday, MONDAY + 10 * 3_600_000, false, "UTC")).toBe(4);
    expect(sendingDaysSince(friday, MONDAY + 10 * 3_600_000, true, "UTC")).toBe(2);
    expect(sendingDaysSince(MONDAY, MONDAY + 1000, false, "UTC")).toBe(1);
  });

  it("sends nothing on a weekend when weekdays only, in the warmup zone", () => {
    const saturday = MONDAY - 2 * DAY_MS + 12 * 3_600_000;
    expect(isWeekend(saturday, "UTC")).toBe(true);
    expect(isWeekend(MONDAY + 12 * 3_600_000, "UTC")).toBe(false);
    // Monday 02:00 UTC is still Sunday in New York.
    expect(isWeekend(MONDAY + 2 * 3_600_000, "America/New_York")).toBe(true);
    expect(dailyTarget({ ...base, weekend: true, weekdaysOnly: true })).toBe(0);
    expect(dailyTarget({ ...base, weekend: true, weekdaysOnly: false })).toBeGreaterThan(0);
  });

  it("auto-adjusts: campaign and warmup mail stay within the cap, never below 1", () => {
    const fixed = { ...base, minCount: 20, maxCount: 20, autoAdjust: true, maxEmailPerDay: 30 };
    expect(dailyTarget({ ...fixed, campaignToday: 0 })).toBe(20);
    expect(dailyTarget({ ...fixed, campaignToday: 25 })).toBe(5);
    expect(dailyTarget({ ...fixed, campaignToday: 40 })).toBe(1);
    expect(dailyTarget({ ...fixed, autoAdjust: false, campaignToday: 25 })).toBe(20);
  });

  it("spreads the day's sends between 08:00 and 20:00 of the zone, ascending", () => {
    const day = zonedDay(MONDAY + 12 * 3_600_000, "Europe/Paris");
    const times = sendTimes(3, day, 12, "Europe/Paris");
    expect(times).toHaveLength(12);
    expect([...times].sort((a, b) => a - b)).toEqual(times);
    // Paris is UTC+1 in November: 08:00-20:00 there is 07:00-19:00 UTC.
    expect(times[0]!).toBeGreaterThanOrEqual(MONDAY + 7 * 3_600_000);
    expect(times.at(-1)!).toBeLessThan(MONDAY + 19 * 3_600_000);
    // One in each hour-long slot.
    expect(times.map((t) => Math.floor((t - MONDAY - 7 * 3_600_000) / 3_600_000))).toEqual([0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
  });

  it("sends only between 08:00 and 20:00 of the zone: outside, it waits for the next opening", () => {
    const hour = 3_600_000;
    // Paris is UTC+1 in November.
    expect(nextWindowOpening(MONDAY + 3 * hour, "Europe/Paris")).toBe(MONDAY + 7 * hour);
    expect(nextWindowOpening(MONDAY + 7 * hour - 1, "Europe/Paris")).toBe(MONDAY + 7 * hour);
    expect(nextWindowOpening(MONDAY + 7 * hour, "Europe/Paris")).toBeNull();
    expect(nextWindowOpening(MONDAY + 19 * hour - 1, "Europe/Paris")).toBeNull();
    expect(nextWindowOpening(MONDAY + 19 * hour, "Europe/Paris")).toBe(MONDAY + DAY_MS + 7 * hour);
    expect(nextWindowOpening(MONDAY + 23.5 * hour, "Europe/Paris"), "00:30 in Paris is the next day there").toBe(MONDAY + DAY_MS + 7 * hour);
    expect(nextWindowOpening(MONDAY + 21 * hour, "UTC")).toBe(MONDAY + DAY_MS + 8 * hour);
  });
});

describe("partners", () => {
  const pool: Partner[] = [
    { id: 1, provider: "GMAIL", domain: "a.com" },
    { id: 2, provider: "GMAIL", domain: "a.com" },
    { id: 3, provider: "GMAIL", domain: "a.com" },
    { id: 4, provider: "OUTLOOK", domain: "b.com" },
    { id: 5, provider: "OUTLOOK", domain: "c.com" },
    { id: 6, provider: "lab.test", domain: "d.com" },
    { id: 7, provider: "lab.test", domain: "e.com" },
  ];

  it("never picks the mailbox itself, and each member once a day while the pool allows", () => {
    const picked = choosePartners(pool[0]!, pool, 6, MONDAY);
    expect(picked).not.toContain(1);
    expect(new Set(picked).size).toBe(6);
    const more = choosePartners(pool[0]!, pool, 9, MONDAY);
    expect(more.slice(0, 6).sort()).toEqual([2, 3, 4, 5, 6, 7]);
  });

  it("prefers another provider and domain two to one", () => {
    const picked = choosePartners(pool[0]!, pool, 3, MONDAY);
    const far = picked.filter((id) => id >= 4).length;
    expect(far).toBe(2);
  });

  it("is stable per mailbox and day, and varies across days", () => {
    expect(choosePartners(pool[0]!, pool, 4, MONDAY)).toEqual(choosePartners(pool[0]!, pool, 4, MONDAY));
    const days = Array.from({ length: 10 }, (_, i) => choosePartners(pool[0]!, pool, 1, MONDAY + i * DAY_MS)[0]);
    expect(new Set(days).size).toBeGreaterThan(1);
  });

  it("answers nothing with no one else in the pool", () => {
    expect(choosePartners(pool[0]!, [pool[0]!], 5, MONDAY)).toEqual([]);
  });
});

describe("replies, reputation and blocking", () => {
  it("answers the configured share of messages by a stable hash of the Message-ID", () => {
    const ids = Array.from({ length: 2000 }, (_, i) => `<wu.${i}@x.test>`);
    const share = ids.filter((id) => answers(id, 30)).length / ids.length;
    expect(share).toBeGreaterThan(0.26);
    expect(share).toBeLessThan(0.34);
    expect(ids.filter((id) => answers(id, 0))).toEqual([]);
    expect(ids.every((id) => answers(id, 100))).toBe(true);
    expect(answers(ids[5]!, 30)).toBe(answers(ids[5]!, 30));
  });

  it("gives the inbox share as reputation, null under 10 observations", () => {
    expect(reputation(9, 9)).toBeNull();
    expect(reputation(9, 10)).toBe(90);
    expect(reputation(131, 134)).toBe(98);
  });

  it("tells a policy rejection from a hard bounce and a passing fault", () => {
    expect(refusalKind(550, "5.7.1 Message rejected due to policy")).toBe("policy");
    expect(refusalKind(535, "5.7.8 Authentication credentials invalid")).toBe("bounce");
    expect(refusalKind(550, "5.1.1 No such user")).toBe("bounce");
    expect(refusalKind(421, "4.7.0 Try again later")).toBe("other");
    expect(refusalKind(null, "connection reset")).toBe("other");
  });
});

describe("content", () => {
  it("makes two lowercase words joined by '-' as the identifier", () => {
    for (let i = 0; i < 50; i++) expect(newWarmupKey()).toMatch(/^[a-z]+-[a-z]+$/);
  });

  it("varies subject and body, ends with the identifier, and carries no link", () => {
    const emails = Array.from({ length: 200 }, (_, i) => warmupEmail(`<wu.${i}@x.test>`, "Ann Lee", "Bob Stone", "amber-birch"));
    expect(new Set(emails.map((e) => e.subject)).size).toBeGreaterThan(15);
    expect(new Set(emails.map((e) => e.text)).size).toBeGreaterThan(150);
    for (const email of emails) {
      expect(email.text.endsWith("amber-birch")).toBe(true);
      expect(email.text).toMatch(/^\w[\w ]*Bob,/);
      expect(email.html).not.toMatch(/href|<img|http/i);
      expect(email.text).not.toMatch(/http|unsubscribe/i);
    }
    expect(warmupEmail("<a@b>", "A", "B", "k")).toEqual(warmupEmail("<a@b>", "A", "B", "k"));
  });

  it("replies in the thread's subject", () => {
    expect(warmupReply("<r@x>", "Checking in", "Bob", "Ann", "tide-onyx").subject).toBe("Re: Checking in");
    expect(warmupReply("<r@x>", "Re: Checking in", "Bob", "Ann", "tide-onyx").subject).toBe("Re: Checking in");
    expect(warmupReply("<r@x>", "Checking in", "Bob", "Ann", "tide-onyx").text.endsWith("tide-onyx")).toBe(true);
  });
});

describe("warnings and the spam folder", () => {
  it("warns of a high spam share (10 observations at least), a block and a pool too small", () => {
    const base = { state: "warming" as const, spam: 0, observed: 0, warnPercent: 20, blockedReason: null };
    expect(warmupWarnings(base)).toEqual([]);
    expect(warmupWarnings({ ...base, spam: 2, observed: 10 }).map((w) => w.code)).toEqual(["warmup_spam_high"]);
    expect(warmupWarnings({ ...base, spam: 1, observed: 10 })).toEqual([]);
    expect(warmupWarnings({ ...base, spam: 5, observed: 9 })).toEqual([]);
    expect(warmupWarnings({ ...base, state: "blocked", blockedReason: "550 5.7.1 no" })).toEqual([expect.objectContaining({ code: "warmup_blocked", message: expect.stringContaining("550 5.7.1 no") })]);
    expect(warmupWarnings({ ...base, state: "waiting_for_pool" }).map((w) => w.code)).toEqual(["warmup_waiting_for_pool"]);
  });

  it("finds the spam folder by its \\Junk special use first, then by the known names", () => {
    const listed = listedFolders([
      { text: 'LIST (\\HasNoChildren) "/" INBOX', literals: [] },
      { text: 'LIST (\\HasNoChildren) "/" "Junk E-mail"', literals: [] },
      { text: 'LIST (\\HasNoChildren \\Junk) "/" Bulk', literals: [] },
      { text: "OK done", literals: [] },
    ]);
    expect(listed.map((f) => f.name)).toEqual(["INBOX", "Junk E-mail", "Bulk"]);
    expect(spamFolder(listed)).toBe("Bulk");
    expect(spamFolder(listed.slice(0, 2))).toBe("Junk E-mail");
    expect(spamFolder([{ name: "[Gmail]/Spam", flags: [] }, { name: "Archive", flags: [] }])).toBe("[Gmail]/Spam");
    expect(spamFolder([{ name: "INBOX", flags: [] }])).toBeNull();
  });
});
