import { describe, expect, it } from "vitest";
import { cronFromObject, dueSlots, firstSlotWithin, isFiveFieldCron, slotAfter, slotAtOrAfter, type DueTest } from "../../src/deliverability/schedule";
import { isTimeZone, zonedDayRange, zonedInstant, zoneOffset, parseCalendarDate } from "../../src/platform/zoned-time";

const at = (text: string) => Date.parse(text);
const HOUR = 3_600_000;
const NY = "America/New_York";
const PARIS = "Europe/Paris";

describe("cronFromObject and isFiveFieldCron", () => {
  it("writes minute, hour and the sorted distinct weekdays, or every day when none are given", () => {
    expect(cronFromObject({ days: [5, 1, 3, 1], startHour: "09:30", endHour: "17:00" })).toBe("30 9 * * 1,3,5");
    expect(cronFromObject({ tz: PARIS, days: [], startHour: "00:05" })).toBe("5 0 * * *");
  });

  it("accepts only five valid fields", () => {
    expect(isFiveFieldCron("0 9 * * 1-5")).toBe(true);
    expect(isFiveFieldCron("  0 9 * * *  ")).toBe(true);
    expect(isFiveFieldCron("0 0 9 * * *")).toBe(false);
    expect(isFiveFieldCron("0 9 * *")).toBe(false);
    expect(isFiveFieldCron("61 9 * * *")).toBe(false);
    expect(isFiveFieldCron("0 9 * * mon-fry")).toBe(false);
  });
});

describe("slotAtOrAfter", () => {
  it("includes a slot exactly at `from` and otherwise takes the next one", () => {
    expect(slotAtOrAfter("0 9 * * *", "UTC", at("2026-03-02T09:00:00Z"))).toBe(at("2026-03-02T09:00:00Z"));
    expect(slotAtOrAfter("0 9 * * *", "UTC", at("2026-03-02T09:00:00.001Z"))).toBe(at("2026-03-03T09:00:00Z"));
  });

  it("reads the hour in the zone on both sides of a DST change", () => {
    expect(slotAtOrAfter("0 9 * * *", NY, at("2026-03-07T00:00:00Z"))).toBe(at("2026-03-07T14:00:00Z")); // EST
    expect(slotAtOrAfter("0 9 * * *", NY, at("2026-03-08T00:00:00Z"))).toBe(at("2026-03-08T13:00:00Z")); // EDT
    expect(slotAtOrAfter("0 9 * * *", PARIS, at("2026-10-25T00:00:00Z"))).toBe(at("2026-10-25T08:00:00Z")); // CET
  });

  it("takes the first 01:30 of a repeated hour, and the end of the gap for a skipped 02:30", () => {
    expect(slotAtOrAfter("30 1 * * *", NY, at("2026-11-01T04:00:00Z"))).toBe(at("2026-11-01T05:30:00Z")); // 01:30 EDT
    expect(slotAtOrAfter("30 2 * * *", PARIS, at("2026-10-25T00:00:00Z"))).toBe(at("2026-10-25T00:30:00Z")); // 02:30 CEST
    expect(slotAtOrAfter("30 2 * * *", NY, at("2026-03-08T00:00:00Z"))).toBe(at("2026-03-08T07:00:00Z")); // 03:00 EDT
  });
});

describe("slotAfter", () => {
  it("waits at least every_days, taking the next slot of the expression after that", () => {
    expect(slotAfter("0 9 * * *", "UTC", at("2026-03-02T09:00:00Z"), 2)).toBe(at("2026-03-04T09:00:00Z"));
    // Mondays only, every 3 days: the next Monday.
    expect(slotAfter("0 9 * * 1", "UTC", at("2026-03-02T09:00:00Z"), 3)).toBe(at("2026-03-09T09:00:00Z"));
    // Weekdays, every 2 days from a Thursday: Saturday is no slot, so Monday.
    expect(slotAfter("0 9 * * 1-5", "UTC", at("2026-03-05T09:00:00Z"), 2)).toBe(at("2026-03-09T09:00:00Z"));
  });

  it("keeps the local hour across the autumn change (a 25-hour day)", () => {
    expect(slotAfter("0 9 * * *", PARIS, at("2026-10-24T07:00:00Z"), 1)).toBe(at("2026-10-25T08:00:00Z"));
    expect(slotAfter("0 23 * * *", PARIS, at("2026-10-24T21:00:00Z"), 1)).toBe(at("2026-10-25T22:00:00Z"));
    expect(slotAfter("0 9 * * *", NY, at("2026-10-31T13:00:00Z"), 2)).toBe(at("2026-11-02T14:00:00Z"));
  });

  // every_days counts calendar days in the zone: a 24-hour step across the spring change (a 23-hour
  // day) would land after the next day's slot and skip it.
  it("counts every_days in calendar days of the zone across the spring change (a 23-hour day)", () => {
    expect(slotAfter("0 9 * * *", NY, at("2026-03-07T14:00:00Z"), 1)).toBe(at("2026-03-08T13:00:00Z"));
  });

  it("runs a daily test on the day the clocks go forward", () => {
    const test: DueTest = {
      id: 1,
      nextRunAt: at("2026-03-06T14:00:00Z"),
      testEndDate: at("2026-03-31T00:00:00Z"),
      everyDays: 1,
      cron: "0 9 * * *",
      timeZone: NY,
    };
    expect(dueSlots(test, at("2026-03-09T15:00:00Z")).map((s) => s.slot)).toEqual([
      at("2026-03-06T14:00:00Z"),
      at("2026-03-07T14:00:00Z"),
      at("2026-03-08T13:00:00Z"),
      at("2026-03-09T13:00:00Z"),
    ]);
  });
});

describe("dueSlots", () => {
  const daily: DueTest = {
    id: 1,
    nextRunAt: at("2026-03-02T09:00:00Z"),
    testEndDate: at("2026-03-05T09:00:00Z"),
    everyDays: 1,
    cron: "0 9 * * *",
    timeZone: "UTC",
  };

  it("owes nothing before the next run", () => {
    expect(dueSlots(daily, at("2026-03-02T08:59:59.999Z"))).toEqual([]);
  });

  it("catches up every missed slot up to now, each with the slot after it", () => {
    expect(dueSlots(daily, at("2026-03-04T10:00:00Z"))).toEqual([
      { slot: at("2026-03-02T09:00:00Z"), next: at("2026-03-03T09:00:00Z"), finished: false },
      { slot: at("2026-03-03T09:00:00Z"), next: at("2026-03-04T09:00:00Z"), finished: false },
      { slot: at("2026-03-04T09:00:00Z"), next: at("2026-03-05T09:00:00Z"), finished: false },
    ]);
  });

  it("runs a slot exactly at the end date, then finishes", () => {
    const slots = dueSlots(daily, at("2026-03-20T00:00:00Z"));
    expect(slots).toHaveLength(4);
    expect(slots[3]).toEqual({ slot: at("2026-03-05T09:00:00Z"), next: null, finished: true });
  });

  it("steps by every_days", () => {
    const slots = dueSlots({ ...daily, everyDays: 3, testEndDate: at("2026-03-31T00:00:00Z") }, at("2026-03-09T09:00:00Z"));
    expect(slots.map((s) => s.slot)).toEqual([at("2026-03-02T09:00:00Z"), at("2026-03-05T09:00:00Z"), at("2026-03-08T09:00:00Z")]);
    expect(slots[2]!.next).toBe(at("2026-03-11T09:00:00Z"));
  });

  it("catches up at most 50 slots in one firing", () => {
    const slots = dueSlots({ ...daily, nextRunAt: at("2026-01-01T09:00:00Z"), testEndDate: at("2027-12-31T00:00:00Z") }, at("2027-01-01T00:00:00Z"));
    expect(slots).toHaveLength(50);
    expect(slots[49]).toEqual({ slot: at("2026-02-19T09:00:00Z"), next: at("2026-02-20T09:00:00Z"), finished: false });
  });
});

describe("firstSlotWithin", () => {
  it("gives the first slot at or after the start, if it is not past the end", () => {
    expect(firstSlotWithin("0 9 * * *", NY, at("2026-03-08T13:00:00Z"), at("2026-03-08T13:00:00Z"))).toBe(at("2026-03-08T13:00:00Z"));
    expect(firstSlotWithin("0 9 * * 1", "UTC", at("2026-03-03T00:00:00Z"), at("2026-03-09T09:00:00Z"))).toBe(at("2026-03-09T09:00:00Z"));
    expect(firstSlotWithin("0 9 * * 1", "UTC", at("2026-03-03T00:00:00Z"), at("2026-03-09T08:59:59Z"))).toBeNull();
  });
});

describe("zoned time, beyond test/zoned-time.test.ts", () => {
  it("gives a zone's offset at an instant, whole or fractional seconds, before or after 1970", () => {
    expect(zoneOffset(at("2026-07-01T00:00:00.750Z"), PARIS)).toBe(2 * HOUR);
    expect(zoneOffset(at("2026-01-01T00:00:00Z"), PARIS)).toBe(1 * HOUR);
    expect(zoneOffset(at("2026-03-10T00:00:00Z"), "Asia/Kathmandu")).toBe(5.75 * HOUR);
    expect(zoneOffset(at("2026-03-08T06:59:59Z"), NY)).toBe(-5 * HOUR);
    expect(zoneOffset(at("2026-03-08T07:00:00Z"), NY)).toBe(-4 * HOUR);
    expect(zoneOffset(-500, "UTC")).toBe(0);
  });

  it("resolves Paris wall-clock times across both 2026 changes, a skipped time moving forward by the gap", () => {
    expect(zonedInstant(at("2026-03-29T01:30:00Z"), PARIS)).toBe(at("2026-03-29T00:30:00Z"));
    expect(zonedInstant(at("2026-03-29T02:30:00Z"), PARIS)).toBe(at("2026-03-29T01:30:00Z")); // 03:30 CEST
    expect(zonedInstant(at("2026-10-25T01:30:00Z"), PARIS)).toBe(at("2026-10-24T23:30:00Z"));
    expect(zonedInstant(at("2026-10-25T03:30:00Z"), PARIS)).toBe(at("2026-10-25T02:30:00Z"));
  });

  // East of UTC a guess from the instant's own offset lands on the later (winter) occurrence only.
  it("takes the first occurrence of a repeated time east of UTC too", () => {
    expect(zonedInstant(at("2026-10-25T02:30:00Z"), PARIS)).toBe(at("2026-10-25T00:30:00Z")); // 02:30 CEST
  });

  it("gives multi-day local ranges, the 25-hour Paris day included", () => {
    const day = (text: string) => parseCalendarDate(text)!;
    expect(zonedDayRange(day("2026-10-24"), day("2026-10-26"), PARIS)).toEqual({
      start: at("2026-10-23T22:00:00Z"),
      end: at("2026-10-26T23:00:00Z"),
    });
    const { start, end } = zonedDayRange(day("2026-10-25"), day("2026-10-25"), PARIS);
    expect((end - start) / HOUR).toBe(25);
  });

  it("refuses UTC offsets and offset spellings as zone names, but accepts Etc/GMT zones", () => {
    expect(isTimeZone("+05:00")).toBe(false);
    expect(isTimeZone("UTC+5")).toBe(false);
    expect(isTimeZone("GMT-3")).toBe(false);
    expect(isTimeZone("Europe/../Paris")).toBe(false);
    expect(isTimeZone("Etc/GMT+5")).toBe(true);
    expect(isTimeZone("America/Argentina/Buenos_Aires")).toBe(true);
  });
});
