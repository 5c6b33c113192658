import { describe, expect, it } from "vitest";
import { hoursChanged, redatingGroup } from "../../src/schedule/redating";
import { FIRST_SCHEDULE } from "../../src/schedule/settings";
import type { Schedule } from "../../src/schedule/window";

const at = (iso: string) => Date.parse(iso);

/** Monday-Friday 09:00-17:00 in Paris, in each lead's zone. */
function schedule(overrides: Partial<Schedule> = {}): Schedule {
  return { ...FIRST_SCHEDULE, timezone: "Europe/Paris", send_in_lead_timezone: true, ...overrides };
}

/** Saturday 2026-03-07 12:00 in New York (17:00Z): Monday-Friday hours open again on Monday. */
const SATURDAY_NOON = at("2026-03-07T17:00:00Z");
const NEW_YORK = "America/New_York";

describe("hoursChanged", () => {
  it("is true for the zone, days, hours, start time or lead zones, not for the pacing", () => {
    expect(hoursChanged(schedule(), schedule({ min_time_btw_emails: 20, max_new_leads_per_day: 5 }))).toBe(false);
    expect(hoursChanged(schedule(), schedule({ days_of_the_week: [5, 4, 3, 2, 1] }))).toBe(false);
    expect(hoursChanged(schedule(), schedule({ end_hour: "18:00" }))).toBe(true);
    expect(hoursChanged(schedule(), schedule({ days_of_the_week: [0, 1, 2, 3, 4, 5, 6] }))).toBe(true);
    expect(hoursChanged(schedule(), schedule({ send_in_lead_timezone: false }))).toBe(true);
    expect(hoursChanged(schedule(), schedule({ schedule_start_time: "2026-04-01T00:00:00Z" }))).toBe(true);
    expect(hoursChanged(null, schedule())).toBe(true);
  });
});

describe("redatingGroup", () => {
  const change = { campaign: 7, zoneBefore: NEW_YORK, zoneAfter: NEW_YORK, delays: [0, 2], now: SATURDAY_NOON };

  it("dates records waiting on Monday's opening by weekend hours open now, and a follow-up's gap by its previous send", () => {
    const group = redatingGroup({ ...change, before: schedule(), after: schedule({ days_of_the_week: [0, 1, 2, 3, 4, 5, 6] }) })!;
    expect(group).toMatchObject({ campaign: 7, zone: NEW_YORK, old: at("2026-03-09T13:00:00Z"), open: SATURDAY_NOON, later: at("2026-03-09T13:00:00Z") });
    // A 2-day step is due by now when its previous send was Thursday noon or before (EST both days).
    expect(group.cutoffs).toEqual({ "0": SATURDAY_NOON, "2": at("2026-03-05T17:00:00Z") });
  });

  it("dates records waiting on the old opening due now once the lead zones are off: the pass checks the campaign's window", () => {
    const group = redatingGroup({ ...change, before: schedule(), after: schedule({ send_in_lead_timezone: false }) })!;
    expect(group).toMatchObject({ old: at("2026-03-09T13:00:00Z"), open: SATURDAY_NOON, later: at("2026-03-09T13:00:00Z") });
  });

  it("moves records due now into their windows once the lead zones are on", () => {
    const group = redatingGroup({ ...change, before: schedule({ send_in_lead_timezone: false }), after: schedule() })!;
    expect(group).toMatchObject({ old: null, open: at("2026-03-09T13:00:00Z"), later: null });
  });

  it("is null when no record of the group moves", () => {
    expect(redatingGroup({ ...change, before: schedule(), after: schedule({ timezone: "Asia/Tokyo" }) })).toBeNull();
    expect(redatingGroup({ ...change, before: schedule({ send_in_lead_timezone: false }), after: schedule({ send_in_lead_timezone: false, end_hour: "18:00" }) })).toBeNull();
  });
});
