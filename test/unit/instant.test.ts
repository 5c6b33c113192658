import { describe, expect, it } from "vitest";
import { z } from "@hono/zod-openapi";
import { instant } from "../../src/platform/openapi";
import { parseInstant } from "../../src/platform/time";

const at = (text: string) => Date.parse(text);

describe("parseInstant: any ISO 8601 date-time (CONTRACT 0)", () => {
  it("reads a time without a zone as UTC, to the hour, minute or second", () => {
    expect(parseInstant("2026-12-01T09:00:00")).toBe(at("2026-12-01T09:00:00Z"));
    expect(parseInstant("2026-12-01T09:00")).toBe(at("2026-12-01T09:00:00Z"));
    expect(parseInstant("2026-12-01T09")).toBe(at("2026-12-01T09:00:00Z"));
    expect(parseInstant("2026-12-01 09:00:00")).toBe(at("2026-12-01T09:00:00Z"));
  });

  it("reads every spelling of the zone", () => {
    const nine = at("2026-12-01T08:00:00Z");
    for (const text of ["2026-12-01T08:00:00Z", "2026-12-01t08:00:00z", "2026-12-01T09:00:00+01:00", "2026-12-01T09:00:00+0100", "2026-12-01T09:00+01", "2026-12-01T03:30:00-04:30", "2026-12-01T08:00:00-00:00"]) {
      expect(parseInstant(text), text).toBe(nine);
    }
    expect(parseInstant("2026-12-01T00:30:00+01:00")).toBe(at("2026-11-30T23:30:00Z"));
  });

  it("reads a space where the offset's + was: what an unencoded + in a query string arrives as", () => {
    const nine = at("2026-12-01T08:00:00Z");
    for (const text of ["2026-12-01T09:00:00 01:00", "2026-12-01T09:00:00.000 0100", "2026-12-01 09:00 01", "20261201T090000 0100"]) {
      expect(parseInstant(text), text).toBe(nine);
    }
  });

  it("reads any fraction of a second, to the millisecond", () => {
    expect(parseInstant("2026-12-01T09:00:00.5Z")).toBe(at("2026-12-01T09:00:00.500Z"));
    expect(parseInstant("2026-12-01T09:00:00.123456789+01:00")).toBe(at("2026-12-01T08:00:00.123Z"));
    expect(parseInstant("2026-12-01T09:00:00,25")).toBe(at("2026-12-01T09:00:00.250Z"));
  });

  it("reads the basic form", () => {
    expect(parseInstant("20261201T090000Z")).toBe(at("2026-12-01T09:00:00Z"));
    expect(parseInstant("20261201T0900+0100")).toBe(at("2026-12-01T08:00:00Z"));
    expect(parseInstant("20261201T090000.75")).toBe(at("2026-12-01T09:00:00.750Z"));
  });

  it("reads years below 100 as written", () => {
    expect(new Date(parseInstant("0050-06-01T00:00:00Z")!).getUTCFullYear()).toBe(50);
  });

  it("refuses what is not a date-time", () => {
    for (const text of [
      "", "2026-12-01", "2026-12-01T", "2026-12-01T9:00", "2026-12-01T09:00:00+1", "2026-12-01T09:00:00 +01:00", "2026-02-30T09:00:00Z",
      "2026-13-01T09:00:00Z", "2026-12-01T24:00:00Z", "2026-12-01T09:60:00Z", "2026-12-01T09:00:60Z", "2026-12-01T09:00:00+24:00",
      "2026-12-01T09:00:00+01:60", "2026-12-01T09:00:00.Z", "2026-12-0109:00:00", "2026-12-01T0900", "20261201T09:00", "Tue, 01 Dec 2026 09:00:00 GMT",
      "1764579600000", " 2026-12-01T09:00:00Z", "2026-12-01T09:00:00Z ",
    ]) {
      expect(parseInstant(text), text).toBeNull();
    }
  });
});

describe("instant(): the request schema", () => {
  const schema = instant();

  it("passes the UTC timestamp on, in the form timestamps leave the API", () => {
    expect(schema.parse("2026-12-01T09:00")).toBe("2026-12-01T09:00:00.000Z");
    expect(schema.parse("2026-12-01T09:00:00.1234+01")).toBe("2026-12-01T08:00:00.123Z");
  });

  it("fails with its own message, and a missing value is Required", () => {
    const wrong = schema.safeParse("next tuesday");
    expect(wrong.success).toBe(false);
    expect(wrong.error!.issues.map((issue) => issue.message)).toEqual(["Must be an ISO 8601 date-time"]);
    expect(z.object({ at: schema }).safeParse({}).error!.issues[0]!.message).toBe("Required");
  });

  it("keeps a date-only form first in a union, so the route still sees the date", () => {
    const dateOrInstant = z.union([z.iso.date(), schema]);
    expect(dateOrInstant.parse("2026-12-01")).toBe("2026-12-01");
    expect(dateOrInstant.parse("2026-12-01T09:00")).toBe("2026-12-01T09:00:00.000Z");
  });

  it("runs refinements on the UTC value, and not on an unreadable one", () => {
    const after = schema.refine((value) => Date.parse(value) > Date.parse("2026-12-01T08:30:00Z"), "too early");
    expect(after.safeParse("2026-12-01T09:00").success).toBe(true);
    expect(after.safeParse("2026-12-01T09:00+01:00").error!.issues.map((issue) => issue.message)).toEqual(["too early"]);
    expect(after.safeParse("soon").error!.issues.map((issue) => issue.message)).toEqual(["Must be an ISO 8601 date-time"]);
  });
});
