import { describe, expect, it } from "vitest";
import { daysBetween, isTimeZone, parseCalendarDate, zonedDayRange, zonedInstant } from "../src/platform/zoned-time";

const utc = (text: string) => Date.parse(text);

describe("zoned time", () => {
  it("parses only real calendar dates", () => {
    expect(parseCalendarDate("2024-02-29")).toBe(utc("2024-02-29T00:00:00Z"));
    expect(parseCalendarDate("2026-02-29")).toBeNull();
    expect(parseCalendarDate("2026-13-01")).toBeNull();
    expect(parseCalendarDate("2026-01-01T00:00:00Z")).toBeNull();
  });

  it("counts calendar days", () => {
    expect(daysBetween(parseCalendarDate("2026-01-01")!, parseCalendarDate("2026-01-31")!)).toBe(30);
    expect(daysBetween(parseCalendarDate("2026-03-01")!, parseCalendarDate("2026-03-31")!)).toBe(30);
  });

  it("knows IANA zones", () => {
    expect(isTimeZone("Asia/Kolkata")).toBe(true);
    expect(isTimeZone("UTC")).toBe(true);
    expect(isTimeZone("Nowhere/Special")).toBe(false);
  });

  it("resolves wall-clock times across DST, a skipped time moving forward by the gap", () => {
    expect(zonedInstant(utc("2026-03-08T01:30:00Z"), "America/New_York")).toBe(utc("2026-03-08T06:30:00Z"));
    expect(zonedInstant(utc("2026-03-08T02:30:00Z"), "America/New_York")).toBe(utc("2026-03-08T07:30:00Z")); // 03:30 EDT
    expect(zonedInstant(utc("2026-03-08T03:30:00Z"), "America/New_York")).toBe(utc("2026-03-08T07:30:00Z"));
    // 01:30 happens twice on 2026-11-01: the first (EDT) is taken.
    expect(zonedInstant(utc("2026-11-01T01:30:00Z"), "America/New_York")).toBe(utc("2026-11-01T05:30:00Z"));
  });

  it("gives whole local days, 23 and 25 hours long at the DST changes", () => {
    const day = (date: string, zone: string) => {
      const d = parseCalendarDate(date)!;
      const { start, end } = zonedDayRange(d, d, zone);
      return (end - start) / 3_600_000;
    };
    expect(day("2026-03-08", "America/New_York")).toBe(23);
    expect(day("2026-11-01", "America/New_York")).toBe(25);
    expect(day("2026-03-10", "Asia/Kathmandu")).toBe(24);
    expect(zonedDayRange(parseCalendarDate("2026-03-10")!, parseCalendarDate("2026-03-10")!, "Asia/Kathmandu").start).toBe(
      utc("2026-03-09T18:15:00Z"),
    );
  });
});
