import { describe, expect, it } from "vitest";
import {
  capRemaining,
  currentWindow,
  gapEndsAt,
  isInWindow,
  localDayKey,
  localDayRange,
  mailboxCapReached,
  mailboxDayKey,
  newLeadAllowed,
  nextLocalDayStart,
  nextMailboxDayStart,
  nextSendAt,
  nextWindowOpen,
  normalizeDays,
  parseClock,
  enrolmentDue,
  lastSendDueBy,
  recordDueAt,
  recordSchedule,
  type Schedule,
  stepDueAt,
} from "../../src/schedule/window";

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number | null) => (ms === null ? null : new Date(ms).toISOString());

function schedule(overrides: Partial<Schedule> = {}): Schedule {
  return {
    timezone: "America/New_York",
    days_of_the_week: [1, 2, 3, 4, 5],
    start_hour: "09:00",
    end_hour: "17:00",
    min_time_btw_emails: 10,
    max_new_leads_per_day: 100,
    schedule_start_time: null,
    ...overrides,
  };
}

// Calendar facts used below: 2026-03-08 and 2026-11-01 are Sundays (US DST starts / ends at 02:00
// local); 2026-03-29 is a Sunday (EU change at 01:00Z); 2026-01-02 is a Friday; Chatham (+13:45 in
// its summer, +12:45 in winter) changes at 14:00Z on 2026-04-04 (03:45 -> 02:45) and on 2026-09-26
// (02:45 -> 03:45).

describe("parsing", () => {
  it("reads HH:MM 24 h and nothing else", () => {
    expect(["00:00", "09:00", "23:59", "24:00", "9:00", "12:60", "12:5"].map(parseClock)).toEqual([0, 540, 1439, null, null, null, null]);
  });

  it("folds 7 onto Sunday and drops repeats and out-of-range days", () => {
    expect(normalizeDays([7, 0, 1, 1, 8, -1, 2.5, 6])).toEqual([0, 1, 6]);
  });
});

describe("local day", () => {
  it("keys a day by the zone's calendar", () => {
    expect(localDayKey(at("2026-03-08T04:59:00Z"), "America/New_York")).toBe("2026-03-07");
    expect(localDayKey(at("2026-03-08T05:00:00Z"), "America/New_York")).toBe("2026-03-08");
    expect(localDayKey(at("2026-01-01T18:29:00Z"), "Asia/Kolkata")).toBe("2026-01-01");
    expect(localDayKey(at("2026-01-01T18:30:00Z"), "Asia/Kolkata")).toBe("2026-01-02");
    expect(localDayKey(at("2026-01-01T10:14:00Z"), "Pacific/Chatham")).toBe("2026-01-01");
    expect(localDayKey(at("2026-01-01T10:15:00Z"), "Pacific/Chatham")).toBe("2026-01-02");
  });

  it("gives a 23-hour and a 25-hour range on the DST Sundays", () => {
    const spring = localDayRange(at("2026-03-08T12:00:00Z"), "America/New_York");
    expect([iso(spring.start), iso(spring.end)]).toEqual(["2026-03-08T05:00:00.000Z", "2026-03-09T04:00:00.000Z"]);
    const autumn = localDayRange(at("2026-11-01T12:00:00Z"), "America/New_York");
    expect([iso(autumn.start), iso(autumn.end)]).toEqual(["2026-11-01T04:00:00.000Z", "2026-11-02T05:00:00.000Z"]);
    expect(iso(nextLocalDayStart(at("2026-03-08T12:00:00Z"), "America/New_York"))).toBe("2026-03-09T04:00:00.000Z");
  });

  it("counts a mailbox's day in UTC whatever the campaign zone", () => {
    expect(mailboxDayKey(at("2026-03-09T03:00:00Z"))).toBe("2026-03-09");
    expect(iso(nextMailboxDayStart(at("2026-03-09T03:00:00Z")))).toBe("2026-03-10T00:00:00.000Z");
    expect(iso(nextMailboxDayStart(at("2026-03-09T00:00:00Z")))).toBe("2026-03-10T00:00:00.000Z");
  });
});

describe("isInWindow", () => {
  it("opens at start_hour and closes at end_hour, in EST and in EDT", () => {
    const s = schedule();
    // Friday 2026-03-06 is EST (-5): 09:00 = 14:00Z.
    expect([isInWindow(s, at("2026-03-06T13:59:00Z")), isInWindow(s, at("2026-03-06T14:00:00Z"))]).toEqual([false, true]);
    // Monday 2026-03-09 is EDT (-4): 09:00 = 13:00Z, 17:00 = 21:00Z.
    expect(["12:59", "13:00", "20:59", "21:00"].map((t) => isInWindow(s, at(`2026-03-09T${t}:00Z`)))).toEqual([false, true, true, false]);
  });

  it("is closed on unlisted days (Saturday in New York while Sunday in UTC)", () => {
    expect(isInWindow(schedule({ days_of_the_week: [0, 1, 2, 3, 4, 5] }), at("2026-03-08T03:00:00Z"))).toBe(false);
    expect(isInWindow(schedule({ days_of_the_week: [6], end_hour: "23:00" }), at("2026-03-08T03:00:00Z"))).toBe(true);
  });

  it("takes 7 as Sunday", () => {
    expect(isInWindow(schedule({ days_of_the_week: [7] }), at("2026-03-08T14:00:00Z"))).toBe(true);
  });

  it("opens a window whose start the spring jump skips at the jump, not 30 minutes later", () => {
    const s = schedule({ days_of_the_week: [0], start_hour: "02:30", end_hour: "04:00" });
    // 02:00 EST -> 03:00 EDT at 07:00Z; 04:00 EDT = 08:00Z.
    const w = currentWindow(s, at("2026-03-08T07:15:00Z"));
    expect([iso(w?.start ?? null), iso(w?.end ?? null)]).toEqual(["2026-03-08T07:00:00.000Z", "2026-03-08T08:00:00.000Z"]);
    expect(["06:59", "07:00", "07:29", "07:59", "08:00"].map((t) => isInWindow(s, at(`2026-03-08T${t}:00Z`)))).toEqual([
      false,
      true,
      true,
      true,
      false,
    ]);
  });

  it("closes a window whose end the spring jump skips at the jump", () => {
    const s = schedule({ days_of_the_week: [0], start_hour: "01:00", end_hour: "02:30" });
    // 01:00 EST = 06:00Z; the clock passes 02:30 at the jump, 07:00Z.
    expect(["05:59", "06:00", "06:59", "07:00", "07:20"].map((t) => isInWindow(s, at(`2026-03-08T${t}:00Z`)))).toEqual([
      false,
      true,
      true,
      false,
      false,
    ]);
  });

  it("keeps both passes of the repeated autumn hour inside a window over it", () => {
    const s = schedule({ days_of_the_week: [0], start_hour: "01:00", end_hour: "02:00" });
    // 01:00 EDT = 05:00Z, then 01:00 EST = 06:00Z again, 02:00 EST = 07:00Z: two real hours.
    expect(["04:59", "05:00", "05:59", "06:30", "06:59", "07:00"].map((t) => isInWindow(s, at(`2026-11-01T${t}:00Z`)))).toEqual([
      false,
      true,
      true,
      true,
      true,
      false,
    ]);
  });

  it("sends nothing before schedule_start_time", () => {
    const s = schedule({ schedule_start_time: "2026-03-11T15:00:00Z" });
    expect([isInWindow(s, at("2026-03-09T14:00:00Z")), isInWindow(s, at("2026-03-11T14:59:00Z")), isInWindow(s, at("2026-03-11T15:00:00Z"))]).toEqual([
      false,
      false,
      true,
    ]);
  });
});

describe("nextWindowOpen", () => {
  it("is the instant itself inside the window", () => {
    expect(iso(nextWindowOpen(schedule(), at("2026-03-09T15:30:00Z")))).toBe("2026-03-09T15:30:00.000Z");
  });

  it("skips the weekend across the spring change in New York", () => {
    // Friday 17:00 EST (22:00Z) -> Monday 09:00 EDT = 13:00Z.
    expect(iso(nextWindowOpen(schedule(), at("2026-03-06T22:00:00Z")))).toBe("2026-03-09T13:00:00.000Z");
    // Before the window on Friday -> Friday 09:00 EST.
    expect(iso(nextWindowOpen(schedule(), at("2026-03-06T05:00:00Z")))).toBe("2026-03-06T14:00:00.000Z");
  });

  it("skips the weekend across the autumn change in New York", () => {
    // Saturday 2026-10-31 12:00 EDT -> Monday 2026-11-02 09:00 EST = 14:00Z.
    expect(iso(nextWindowOpen(schedule(), at("2026-10-31T16:00:00Z")))).toBe("2026-11-02T14:00:00.000Z");
  });

  it("opens on the change day itself with the new offset", () => {
    const sundays = schedule({ days_of_the_week: [0] });
    expect(iso(nextWindowOpen(sundays, at("2026-03-08T05:00:00Z")))).toBe("2026-03-08T13:00:00.000Z");
    expect(iso(nextWindowOpen(sundays, at("2026-11-01T04:00:00Z")))).toBe("2026-11-01T14:00:00.000Z");
    const skipped = schedule({ days_of_the_week: [0], start_hour: "02:30", end_hour: "04:00" });
    expect(iso(nextWindowOpen(skipped, at("2026-03-08T05:00:00Z")))).toBe("2026-03-08T07:00:00.000Z");
  });

  it("follows Paris onto summer time", () => {
    const paris = schedule({ timezone: "Europe/Paris", days_of_the_week: [0] });
    // Sunday 2026-03-22 09:00 CET = 08:00Z; the next Sunday 09:00 CEST = 07:00Z.
    expect(iso(nextWindowOpen(paris, at("2026-03-21T12:00:00Z")))).toBe("2026-03-22T08:00:00.000Z");
    expect(iso(nextWindowOpen(paris, at("2026-03-28T17:00:00Z")))).toBe("2026-03-29T07:00:00.000Z");
  });

  it("handles a half-hour zone without DST", () => {
    const kolkata = schedule({ timezone: "Asia/Kolkata", start_hour: "09:30", end_hour: "18:00" });
    // Friday 2026-01-02 18:00 IST (12:30Z) -> Monday 09:30 IST = 04:00Z.
    expect(iso(nextWindowOpen(kolkata, at("2026-01-02T12:30:00Z")))).toBe("2026-01-05T04:00:00.000Z");
    expect(isInWindow(kolkata, at("2026-01-02T12:29:00Z"))).toBe(true);
  });

  it("handles Chatham's 45-minute offsets and their changes", () => {
    const chatham = schedule({ timezone: "Pacific/Chatham", days_of_the_week: [0, 1, 2, 3, 4, 5, 6] });
    // Saturday 2026-04-04 17:00 +13:45 = 03:15Z; Sunday 09:00 +12:45 = 2026-04-04T20:15Z.
    expect(iso(nextWindowOpen(chatham, at("2026-04-04T03:15:00Z")))).toBe("2026-04-04T20:15:00.000Z");
    expect(iso(nextWindowOpen(chatham, at("2026-04-03T12:00:00Z")))).toBe("2026-04-03T19:15:00.000Z");
    // 2026-09-27: 02:45 -> 03:45 at 14:00Z; a 02:50-04:00 window opens at the jump and ends 04:00 +13:45 = 14:15Z.
    const early = schedule({ timezone: "Pacific/Chatham", days_of_the_week: [0], start_hour: "02:50", end_hour: "04:00" });
    const w = currentWindow(early, at("2026-09-26T14:05:00Z"));
    expect([iso(w?.start ?? null), iso(w?.end ?? null)]).toEqual(["2026-09-26T14:00:00.000Z", "2026-09-26T14:15:00.000Z"]);
  });

  it("waits for schedule_start_time, then the window", () => {
    expect(iso(nextWindowOpen(schedule({ schedule_start_time: "2026-03-11T15:00:00Z" }), at("2026-03-09T13:00:00Z")))).toBe(
      "2026-03-11T15:00:00.000Z",
    );
    // Starting after Wednesday's window (18:00 EDT) -> Thursday 09:00 EDT.
    expect(iso(nextWindowOpen(schedule({ schedule_start_time: at("2026-03-11T22:00:00Z") }), at("2026-03-09T13:00:00Z")))).toBe(
      "2026-03-12T13:00:00.000Z",
    );
  });

  it("is a week later when today's window has passed and only today is listed", () => {
    expect(iso(nextWindowOpen(schedule({ days_of_the_week: [1] }), at("2026-03-09T21:00:00Z")))).toBe("2026-03-16T13:00:00.000Z");
  });

  it("is null when the schedule can never open", () => {
    expect(nextWindowOpen(schedule({ days_of_the_week: [] }), at("2026-03-09T12:00:00Z"))).toBeNull();
    expect(nextWindowOpen(schedule({ start_hour: "17:00", end_hour: "09:00" }), at("2026-03-09T12:00:00Z"))).toBeNull();
  });
});

describe("stepDueAt", () => {
  it("adds calendar days at the same wall-clock time", () => {
    // Saturday 10:00 EST (15:00Z) + 1 day = Sunday 10:00 EDT (14:00Z): 23 hours.
    expect(iso(stepDueAt(at("2026-03-07T15:00:00Z"), 1, "America/New_York"))).toBe("2026-03-08T14:00:00.000Z");
    // Saturday 10:00 EDT (14:00Z) + 1 day = Sunday 10:00 EST (15:00Z): 25 hours.
    expect(iso(stepDueAt(at("2026-10-31T14:00:00Z"), 1, "America/New_York"))).toBe("2026-11-01T15:00:00.000Z");
    expect(iso(stepDueAt(at("2026-03-28T09:00:00Z"), 2, "Europe/Paris"))).toBe("2026-03-30T08:00:00.000Z");
    expect(iso(stepDueAt(at("2026-01-01T10:00:00Z"), 3, "Asia/Kolkata"))).toBe("2026-01-04T10:00:00.000Z");
  });

  it("is due when the clock passes a wall time the day skips", () => {
    // Saturday 02:30 EST (07:30Z) + 1: Sunday has no 02:30; the clock passes it at the jump, 07:00Z.
    expect(iso(stepDueAt(at("2026-03-07T07:30:00Z"), 1, "America/New_York"))).toBe("2026-03-08T07:00:00.000Z");
  });

  it("is due at once for a 0-day delay", () => {
    expect(stepDueAt(at("2026-03-07T15:00:00Z"), 0, "America/New_York")).toBe(at("2026-03-07T15:00:00Z"));
  });
});

describe("lastSendDueBy", () => {
  it("is the latest send whose step is due by then, across a DST change", () => {
    // Sunday 10:00 EDT (14:00Z) is a day after Saturday 10:00 EST (15:00Z).
    const by = lastSendDueBy(at("2026-03-08T14:00:00Z"), 1, "America/New_York");
    expect(iso(by)).toBe("2026-03-07T15:00:00.000Z");
    expect(stepDueAt(by, 1, "America/New_York")).toBe(at("2026-03-08T14:00:00Z"));
    expect(stepDueAt(by + 1, 1, "America/New_York")).toBeGreaterThan(at("2026-03-08T14:00:00Z"));
    expect(iso(lastSendDueBy(at("2026-03-30T08:00:00Z"), 2, "Europe/Paris"))).toBe("2026-03-28T09:00:00.000Z");
  });

  it("takes no send early whose due time a spring change skips, nor one an autumn change repeats", () => {
    // Due by 03:00 EDT (07:00Z) on the spring day: a send at 02:30 EST the day before (07:30Z) is due at the jump, 07:00Z.
    const spring = lastSendDueBy(at("2026-03-08T07:00:00Z"), 1, "America/New_York");
    expect(stepDueAt(spring, 1, "America/New_York")).toBeLessThanOrEqual(at("2026-03-08T07:00:00Z"));
    // Due by 01:30 EST (06:30Z), the second 01:30 of the autumn day.
    const autumn = lastSendDueBy(at("2026-11-01T06:30:00Z"), 1, "America/New_York");
    expect(stepDueAt(autumn, 1, "America/New_York")).toBeLessThanOrEqual(at("2026-11-01T06:30:00Z"));
  });

  it("is the instant itself for a 0-day delay", () => {
    expect(lastSendDueBy(at("2026-03-07T15:00:00Z"), 0, "America/New_York")).toBe(at("2026-03-07T15:00:00Z"));
  });
});

describe("gaps and caps", () => {
  it("waits the larger of the mailbox and campaign gaps after the mailbox's last send", () => {
    expect(iso(gapEndsAt(at("2026-03-09T14:00:00Z"), 5, 12))).toBe("2026-03-09T14:12:00.000Z");
    expect(iso(gapEndsAt(at("2026-03-09T14:00:00Z"), 30, 12))).toBe("2026-03-09T14:30:00.000Z");
    expect(gapEndsAt(null, 30, 12)).toBeNull();
  });

  it("combines now, due time, gap and window", () => {
    const s = schedule();
    // Gap ends 17:00 EDT Monday = closing time -> Tuesday 09:00 EDT.
    expect(
      iso(nextSendAt({ schedule: s, now: at("2026-03-09T20:55:00Z"), dueAt: 0, lastSentAt: at("2026-03-09T20:50:00Z"), mailboxGapMinutes: 3 })),
    ).toBe("2026-03-10T13:00:00.000Z");
    expect(
      iso(nextSendAt({ schedule: s, now: at("2026-03-09T14:00:00Z"), dueAt: 0, lastSentAt: at("2026-03-09T13:55:00Z"), mailboxGapMinutes: 3 })),
    ).toBe("2026-03-09T14:05:00.000Z");
    expect(iso(nextSendAt({ schedule: s, now: at("2026-03-09T14:00:00Z"), dueAt: at("2026-03-09T16:00:00Z"), lastSentAt: null, mailboxGapMinutes: 0 }))).toBe(
      "2026-03-09T16:00:00.000Z",
    );
  });

  it("reports the daily caps", () => {
    expect([capRemaining(40, 100), capRemaining(100, 100), capRemaining(120, 100)]).toEqual([60, 0, 0]);
    expect([mailboxCapReached(99, 100), mailboxCapReached(100, 100)]).toEqual([false, true]);
    expect([newLeadAllowed(99, schedule()), newLeadAllowed(100, schedule())]).toEqual([true, false]);
  });
});

describe("each lead's own hours (CONTRACT 23.2)", () => {
  const campaign = schedule({ timezone: "UTC", send_in_lead_timezone: true });

  it("moves only the zone, and only when the campaign sends in lead zones and the lead has one", () => {
    expect(recordSchedule(campaign, "Asia/Tokyo")).toMatchObject({ timezone: "Asia/Tokyo", start_hour: "09:00", max_new_leads_per_day: campaign.max_new_leads_per_day });
    expect(recordSchedule(campaign, null)).toBe(campaign);
    expect(recordSchedule({ ...campaign, send_in_lead_timezone: false }, "Asia/Tokyo")).toMatchObject({ timezone: "UTC" });
  });

  it("stores due times at the first instant inside the lead's window, 09:00 local on both sides of a DST change", () => {
    // Friday 2027-03-12 23:00 UTC: Saturday in Tokyo and Paris, 18:00 on Friday in New York.
    const friday = at("2027-03-12T23:00:00Z");
    expect(iso(recordDueAt(campaign, "Asia/Tokyo", friday))).toBe("2027-03-15T00:00:00.000Z");
    expect(iso(recordDueAt(campaign, "Europe/Paris", friday))).toBe("2027-03-15T08:00:00.000Z");
    // New York moves to EDT on Sunday the 14th: Monday 09:00 is 13:00 UTC.
    expect(iso(recordDueAt(campaign, "America/New_York", friday))).toBe("2027-03-15T13:00:00.000Z");
    // No zone: the campaign's.
    expect(iso(recordDueAt(campaign, null, friday))).toBe("2027-03-15T09:00:00.000Z");
    // Already inside: itself. Without lead zones: unchanged, the pass checks the campaign's window.
    expect(recordDueAt(campaign, "Europe/Paris", at("2027-03-15T10:00:00Z"))).toBe(at("2027-03-15T10:00:00Z"));
    expect(recordDueAt({ ...campaign, send_in_lead_timezone: false }, "Asia/Tokyo", friday)).toBe(friday);
  });

  it("opens a window whose start a spring-forward jump skips at the first valid minute after it", () => {
    const sunday = schedule({ timezone: "UTC", send_in_lead_timezone: true, days_of_the_week: [0], start_hour: "02:30", end_hour: "05:00" });
    // 02:30 does not exist in New York on 2027-03-14: the window opens at 03:00 EDT (07:00 UTC).
    expect(iso(recordDueAt(sunday, "America/New_York", at("2027-03-13T12:00:00Z")))).toBe("2027-03-14T07:00:00.000Z");
  });

  it("gives an upload one due time per zone and the campaign's opening to leads without one", () => {
    const now = at("2027-03-12T23:00:00Z");
    expect(enrolmentDue(campaign, ["Asia/Tokyo", "Asia/Tokyo", "Europe/Paris"], now)).toEqual({
      default: at("2027-03-15T09:00:00Z"),
      byZone: { "Asia/Tokyo": at("2027-03-15T00:00:00Z"), "Europe/Paris": at("2027-03-15T08:00:00Z") },
    });
    expect(enrolmentDue({ ...campaign, send_in_lead_timezone: false }, ["Asia/Tokyo"], now)).toEqual({ default: now, byZone: {} });
    expect(enrolmentDue(null, ["Asia/Tokyo"], now)).toEqual({ default: now, byZone: {} });
  });
});
