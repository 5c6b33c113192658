import { describe, expect, it } from "vitest";
import type { Schedule } from "../../src/schedule/window";
import {
  leadWindowFacts,
  mailboxSendingStatus,
  mailboxWarnings,
  type MailboxSnapshot,
  type MailboxStatusSnapshot,
  type SendingSnapshot,
  sendingStatus,
} from "../../src/engine/why-not-sending";

const at = (iso: string) => Date.parse(iso);

const schedule: Schedule = {
  timezone: "America/New_York",
  days_of_the_week: [1, 2, 3, 4, 5],
  start_hour: "09:00",
  end_hour: "17:00",
  min_time_btw_emails: 10,
  max_new_leads_per_day: 100,
  schedule_start_time: null,
};

const mailbox: MailboxSnapshot = { suspended: false, connectionOk: true, sentToday: 10, maxEmailPerDay: 100, lastSentAt: null, gapMinutes: 0, heldUntil: null };

// Monday 2026-03-09 11:00 EDT.
const NOW = at("2026-03-09T15:00:00Z");

function snapshot(overrides: Partial<SendingSnapshot> = {}): SendingSnapshot {
  return {
    now: NOW,
    status: "ACTIVE",
    stepCount: 2,
    schedule,
    mailboxes: [mailbox],
    firstStepsSentToday: 0,
    firstStepsDue: 5,
    followUpsDue: 0,
    nextDueAt: null,
    ...overrides,
  };
}

const summary = (s: SendingSnapshot) => {
  const status = sendingStatus(s);
  return [status.code, status.next_send_at === null ? null : new Date(status.next_send_at).toISOString()];
};

describe("sendingStatus", () => {
  it("is sending now when everything allows it", () => {
    expect(sendingStatus(snapshot())).toEqual({ code: "sending", message: "Sending", next_send_at: NOW });
  });

  it("names the campaign status first, whatever else is wrong", () => {
    const broken = { mailboxes: [], stepCount: 0 };
    expect(
      (["DRAFTED", "PAUSED", "STOPPED", "COMPLETED", "ARCHIVED"] as const).map((status) => summary(snapshot({ ...broken, status }))),
    ).toEqual([
      ["drafted", null],
      ["paused", null],
      ["stopped", null],
      ["completed", null],
      ["archived", null],
    ]);
  });

  it("reports a missing sequence, schedule or mailboxes", () => {
    expect(summary(snapshot({ stepCount: 0 }))).toEqual(["no_sequence", null]);
    expect(summary(snapshot({ schedule: null }))).toEqual(["no_schedule", null]);
    expect(sendingStatus(snapshot({ mailboxes: [] }))).toEqual({
      code: "no_mailboxes",
      message: "No mailboxes are attached to the campaign",
      next_send_at: null,
    });
  });

  it("tells all-suspended from unusable", () => {
    const suspended = { ...mailbox, suspended: true };
    const failing = { ...mailbox, connectionOk: false };
    expect(summary(snapshot({ mailboxes: [suspended, suspended] }))).toEqual(["all_mailboxes_suspended", null]);
    expect(summary(snapshot({ mailboxes: [suspended, failing] }))).toEqual(["all_mailboxes_failing", null]);
    expect(summary(snapshot({ mailboxes: [suspended, failing, mailbox] }))).toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
  });

  it("reports no leads due, with the window time of the next one when known", () => {
    expect(summary(snapshot({ firstStepsDue: 0 }))).toEqual(["no_leads_due", null]);
    // Due Monday 18:00 EDT, after the window -> Tuesday 09:00 EDT.
    expect(summary(snapshot({ firstStepsDue: 0, nextDueAt: at("2026-03-09T22:00:00Z") }))).toEqual([
      "no_leads_due",
      "2026-03-10T13:00:00.000Z",
    ]);
  });

  it("waits for the start time", () => {
    expect(summary(snapshot({ schedule: { ...schedule, schedule_start_time: "2026-03-11T15:00:00Z" } }))).toEqual([
      "before_start_time",
      "2026-03-11T15:00:00.000Z",
    ]);
  });

  it("reports outside the window with its next opening, before any cap", () => {
    // Saturday 2026-03-07 -> Monday 09:00 EDT.
    const capped = { ...mailbox, sentToday: 100 };
    expect(summary(snapshot({ now: at("2026-03-07T15:00:00Z"), mailboxes: [capped] }))).toEqual([
      "outside_window",
      "2026-03-09T13:00:00.000Z",
    ]);
  });

  it("reports the daily cap when every usable mailbox reached it, until the next UTC day's window", () => {
    const capped = { ...mailbox, sentToday: 100 };
    const suspended = { ...mailbox, suspended: true, sentToday: 0 };
    expect(summary(snapshot({ mailboxes: [capped, suspended] }))).toEqual(["daily_cap_reached", "2026-03-10T13:00:00.000Z"]);
    // With a window until 23:00 EDT, the UTC day turns at 20:00 EDT Monday, inside the window.
    const late = { ...schedule, end_hour: "23:00" };
    expect(summary(snapshot({ schedule: late, now: at("2026-03-09T22:00:00Z"), mailboxes: [capped] }))).toEqual([
      "daily_cap_reached",
      "2026-03-10T00:00:00.000Z",
    ]);
    expect(summary(snapshot({ mailboxes: [capped, mailbox] }))).toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
  });

  it("reports the new-leads cap only when no follow-up is due, until the next local day's window", () => {
    expect(summary(snapshot({ firstStepsSentToday: 100 }))).toEqual(["new_leads_cap_reached", "2026-03-10T13:00:00.000Z"]);
    expect(summary(snapshot({ firstStepsSentToday: 100, followUpsDue: 1 }))).toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
    expect(summary(snapshot({ firstStepsSentToday: 99 }))).toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
  });

  it("reports every usable mailbox held by its server, until the first hold ends, even when the hold's own records are all that waits", () => {
    const held = { ...mailbox, heldUntil: at("2026-03-09T16:00:00Z") };
    const heldLonger = { ...mailbox, heldUntil: at("2026-03-09T18:00:00Z") };
    const suspended = { ...mailbox, suspended: true };
    expect(sendingStatus(snapshot({ mailboxes: [heldLonger, held, suspended] }))).toEqual({
      code: "all_mailboxes_held",
      message: "The mail server of every usable mailbox refused its sending for now, or could not be reached: Salvo tries again at next_send_at (each mailbox's sending_status has the server's words)",
      next_send_at: at("2026-03-09T16:00:00Z"),
    });
    // The stopped claim's records were released due at the hold's end: nothing else is due.
    expect(summary(snapshot({ mailboxes: [held], firstStepsDue: 0, nextDueAt: at("2026-03-09T16:00:00Z") }))).toEqual(["all_mailboxes_held", "2026-03-09T16:00:00.000Z"]);
    // A hold ending after the window closes: the next opening.
    expect(summary(snapshot({ mailboxes: [{ ...mailbox, heldUntil: at("2026-03-09T22:00:00Z") }] }))).toEqual(["all_mailboxes_held", "2026-03-10T13:00:00.000Z"]);
    // Work due only after the hold: the later of the two.
    expect(summary(snapshot({ mailboxes: [held], firstStepsDue: 0, nextDueAt: at("2026-03-09T17:00:00Z") }))).toEqual(["all_mailboxes_held", "2026-03-09T17:00:00.000Z"]);
    expect(summary(snapshot({ mailboxes: [held], firstStepsDue: 0 })), "nothing waits: no hold matters").toEqual(["no_leads_due", null]);
    // A campaign that starts after the hold ends: its start.
    const later = { ...schedule, schedule_start_time: "2026-03-09T19:00:00Z" };
    expect(summary(snapshot({ mailboxes: [held], schedule: later }))).toEqual(["all_mailboxes_held", "2026-03-09T19:00:00.000Z"]);
    expect(summary(snapshot({ mailboxes: [{ ...mailbox, heldUntil: NOW }] })), "a hold ending now is over").toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
    expect(summary(snapshot({ mailboxes: [held, mailbox] }))).toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
    // The only mailbox with room is held (the other reached its cap): sending waits for the hold, not for tomorrow.
    expect(summary(snapshot({ mailboxes: [held, { ...mailbox, sentToday: 100 }] }))).toEqual(["all_mailboxes_held", "2026-03-09T16:00:00.000Z"]);
    // A free mailbox's gap decides, not the held one's.
    const busy = { ...mailbox, lastSentAt: at("2026-03-09T14:58:00Z"), gapMinutes: 5 };
    expect(summary(snapshot({ mailboxes: [{ ...mailbox, heldUntil: at("2026-03-09T15:01:00Z") }, busy] }))).toEqual(["sending", "2026-03-09T15:08:00.000Z"]);
  });

  it("gives the earliest time a mailbox's gap allows", () => {
    // Last send 14:58Z; mailbox gap 5, campaign gap 10 -> 15:08Z; the other mailbox is free at 15:03Z.
    const busy = { ...mailbox, lastSentAt: at("2026-03-09T14:58:00Z"), gapMinutes: 5 };
    const lessBusy = { ...mailbox, lastSentAt: at("2026-03-09T14:53:00Z"), gapMinutes: 0 };
    expect(summary(snapshot({ mailboxes: [busy] }))).toEqual(["sending", "2026-03-09T15:08:00.000Z"]);
    expect(summary(snapshot({ mailboxes: [busy, lessBusy] }))).toEqual(["sending", "2026-03-09T15:03:00.000Z"]);
  });
});

describe("mailboxSendingStatus", () => {
  // Paris is CET (+1) on 2026-03-09: its window is 08:00Z-16:00Z.
  const paris: Schedule = { ...schedule, timezone: "Europe/Paris" };
  const due = NOW - 3_600_000;

  function mailboxState(overrides: Partial<MailboxStatusSnapshot> = {}): MailboxStatusSnapshot {
    return { ...mailbox, now: NOW, disconnectMessage: null, campaigns: [{ schedule, nextDueAt: due }], ...overrides };
  }

  const summarise = (m: MailboxStatusSnapshot) => {
    const status = mailboxSendingStatus(m);
    return [status.code, status.next_send_at === null ? null : new Date(status.next_send_at).toISOString()];
  };

  it("names what the customer must fix first", () => {
    expect(summarise(mailboxState({ suspended: true, connectionOk: false, campaigns: [] }))).toEqual(["suspended", null]);
    expect(summarise(mailboxState({ connectionOk: false, campaigns: [] }))).toEqual(["connection_failing", null]);
    // A disconnect (a person must act) says why, before the failing check it also is (CONTRACT 18.5).
    const reason = "The provider says the consent was revoked or expired (invalid_grant): reconnect the mailbox.";
    expect(mailboxSendingStatus(mailboxState({ connectionOk: false, disconnectMessage: reason }))).toEqual({ code: "needs_reconnect", message: reason, next_send_at: null });
    expect(mailboxSendingStatus(mailboxState({ campaigns: [] }))).toEqual({
      code: "no_active_campaigns",
      message: "The mailbox is in no active campaign",
      next_send_at: null,
    });
  });

  it("is sending now, or after the larger of its gap and the campaign's", () => {
    expect(summarise(mailboxState())).toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
    expect(summarise(mailboxState({ lastSentAt: at("2026-03-09T14:58:00Z"), gapMinutes: 5 }))).toEqual(["sending", "2026-03-09T15:08:00.000Z"]);
  });

  it("reports no leads due, with the window time of the next one", () => {
    expect(summarise(mailboxState({ campaigns: [{ schedule, nextDueAt: null }] }))).toEqual(["no_leads_due", null]);
    // Due Tuesday 18:00 EDT -> Wednesday 09:00 EDT.
    expect(summarise(mailboxState({ campaigns: [{ schedule, nextDueAt: at("2026-03-10T22:00:00Z") }] }))).toEqual([
      "no_leads_due",
      "2026-03-11T13:00:00.000Z",
    ]);
  });

  it("reports outside the window when no campaign with due leads is open, with the earliest opening", () => {
    // Monday 17:30 EDT = 22:30 CET: both closed; Paris opens first, Tuesday 08:00Z.
    const late = at("2026-03-09T21:30:00Z");
    expect(summarise(mailboxState({ now: late }))).toEqual(["outside_window", "2026-03-10T13:00:00.000Z"]);
    expect(summarise(mailboxState({ now: late, campaigns: [{ schedule, nextDueAt: due }, { schedule: paris, nextDueAt: due }] }))).toEqual([
      "outside_window",
      "2026-03-10T08:00:00.000Z",
    ]);
    // At 15:30Z Paris (16:30 CET) is open though New York's lead is not due yet.
    expect(
      summarise(
        mailboxState({
          now: at("2026-03-09T15:30:00Z"),
          campaigns: [
            { schedule, nextDueAt: at("2026-03-09T18:00:00Z") },
            { schedule: paris, nextDueAt: due },
          ],
        }),
      ),
    ).toEqual(["sending", "2026-03-09T15:30:00.000Z"]);
    // At 16:30Z Paris (17:30 CET) has closed but New York (12:30 EDT) is open: one open campaign is enough.
    const both = [
      { schedule, nextDueAt: due },
      { schedule: paris, nextDueAt: due },
    ];
    expect(summarise(mailboxState({ now: at("2026-03-09T16:30:00Z"), campaigns: both }))).toEqual(["sending", "2026-03-09T16:30:00.000Z"]);
  });

  it("reports its server's hold while work waits, until the hold ends (or the window then opens)", () => {
    expect(mailboxSendingStatus(mailboxState({ heldUntil: at("2026-03-09T16:00:00Z") }))).toEqual({
      code: "server_refusing",
      message: "The mail server refused this mailbox's sending for now, or could not be reached: Salvo tries again at next_send_at (its warnings have the server's words)",
      next_send_at: at("2026-03-09T16:00:00Z"),
    });
    // The stopped claim's records, released due at the hold's end, are all it has.
    const released = [{ schedule, nextDueAt: at("2026-03-09T16:00:00Z") }];
    expect(summarise(mailboxState({ heldUntil: at("2026-03-09T16:00:00Z"), campaigns: released }))).toEqual(["server_refusing", "2026-03-09T16:00:00.000Z"]);
    expect(summarise(mailboxState({ heldUntil: at("2026-03-09T22:00:00Z") }))).toEqual(["server_refusing", "2026-03-10T13:00:00.000Z"]);
    expect(summarise(mailboxState({ heldUntil: at("2026-03-09T16:00:00Z"), campaigns: [{ schedule, nextDueAt: null }] }))).toEqual(["no_leads_due", null]);
    expect(summarise(mailboxState({ heldUntil: NOW }))).toEqual(["sending", "2026-03-09T15:00:00.000Z"]);
    // A reached cap comes first; the next send is after both.
    expect(summarise(mailboxState({ sentToday: 100, heldUntil: at("2026-03-09T16:00:00Z") }))).toEqual(["daily_cap_reached", "2026-03-10T13:00:00.000Z"]);
  });

  it("reports the cap until the next UTC day's first window", () => {
    expect(summarise(mailboxState({ sentToday: 100 }))).toEqual(["daily_cap_reached", "2026-03-10T13:00:00.000Z"]);
    expect(summarise(mailboxState({ sentToday: 100, campaigns: [{ schedule, nextDueAt: due }, { schedule: paris, nextDueAt: due }] }))).toEqual([
      "daily_cap_reached",
      "2026-03-10T08:00:00.000Z",
    ]);
  });
});

describe("a mailbox's warnings", () => {
  const now = at("2026-03-10T14:00:00Z");
  const none = { now, held: null, unconfirmed: { count: 0, recipients: [] }, days: 7 };

  it("names its campaign emails in doubt, count first, up to five recipients, and nothing when there are none", () => {
    expect(mailboxWarnings(none)).toEqual([]);
    expect(mailboxWarnings({ ...none, unconfirmed: { count: 1, recipients: ["ann@example.com"] } })).toEqual([
      {
        code: "unconfirmed_sends",
        message:
          "1 campaign email from this mailbox in the last 7 days may not have gone out: sending stopped during its SMTP transaction, " +
          "and Salvo never sends an email twice. Recipients: ann@example.com.",
      },
    ]);
    const many = mailboxWarnings({ ...none, unconfirmed: { count: 8, recipients: ["a@x.io", "b@x.io", "c@x.io", "d@x.io", "e@x.io", "f@x.io"] } });
    expect(many[0]!.message).toMatch(/^8 campaign emails .* during their SMTP transaction.* Recipients: a@x\.io, b@x\.io, c@x\.io, d@x\.io, e@x\.io and 3 more\.$/);
  });

  it("says its server refuses its sending, with the server's words and the next try, until that try", () => {
    const held = { until: at("2026-03-10T15:00:00Z"), reason: "550 5.4.5 Daily user sending limit exceeded. - gsmtp" };
    expect(mailboxWarnings({ ...none, held })).toEqual([
      {
        code: "server_refusing",
        message:
          "The mail server refused this mailbox's sending for now, or could not be reached: 550 5.4.5 Daily user sending limit exceeded. - gsmtp. " +
          "Salvo tries again at 2026-03-10T15:00:00.000Z; until then its emails wait, counting no attempt against their leads and bouncing none.",
      },
    ]);
    expect(mailboxWarnings({ ...none, held, unconfirmed: { count: 1, recipients: ["ann@example.com"] } }).map((w) => w.code)).toEqual(["server_refusing", "unconfirmed_sends"]);
    expect(mailboxWarnings({ ...none, held, now: held.until }), "the try is due: the pass says what came of it").toEqual([]);
  });
});

describe("sending_status in each lead's zone (CONTRACT 23.2)", () => {
  const leadZones: Schedule = { ...schedule, send_in_lead_timezone: true };
  // Monday 2026-03-09 03:00 EDT: outside the campaign's window, but a Tokyo lead's 16:00.
  const night = at("2026-03-09T07:00:00Z");

  it("does not hold due records to the campaign's window: their due times are inside their leads' windows", () => {
    expect(sendingStatus(snapshot({ now: night, schedule }))).toMatchObject({ code: "outside_window" });
    expect(sendingStatus(snapshot({ now: night, schedule: leadZones }))).toMatchObject({ code: "sending", next_send_at: night });
  });

  it("names the earliest stored due time, already a window opening, when nothing is due yet", () => {
    const tokyoTomorrow = at("2026-03-10T00:00:00Z");
    expect(sendingStatus(snapshot({ now: night, schedule: leadZones, firstStepsDue: 0, nextDueAt: tokyoTomorrow }))).toMatchObject({
      code: "no_leads_due",
      next_send_at: tokyoTomorrow,
    });
  });

  it("answers a mailbox with due records in lead zones as sending, not outside the window", () => {
    const status = mailboxSendingStatus({
      ...mailbox,
      now: night,
      disconnectMessage: null,
      campaigns: [{ schedule: leadZones, nextDueAt: night - 60_000 }],
    });
    expect(status).toMatchObject({ code: "sending", next_send_at: night });
  });
});

describe("sending_status's lead windows (CONTRACT 23.4)", () => {
  const leadZones: Schedule = { ...schedule, send_in_lead_timezone: true };
  // Monday 2026-03-09 20:00 UTC: 16:00 in New York (the campaign's zone), 05:00 Tuesday in Tokyo, 21:00 in Paris.
  const evening = at("2026-03-09T20:00:00Z");
  const tokyoOpens = at("2026-03-10T00:00:00Z");
  const parisOpens = at("2026-03-10T08:00:00Z");

  it("counts due records inside and outside their own lead's window, those without a zone, and the earliest opening outside", () => {
    const groups = [
      { zone: "Asia/Tokyo", count: 3 },
      { zone: "Europe/Paris", count: 2 },
      { zone: null, count: 4 },
    ];
    expect(leadWindowFacts(leadZones, evening, groups)).toEqual({ due_in_window: 4, due_outside_window: 5, leads_without_zone: 4, next_window_at: tokyoOpens });
    expect(leadWindowFacts(leadZones, evening, [{ zone: "Europe/Paris", count: 1 }]).next_window_at).toBe(parisOpens);
    expect(leadWindowFacts(leadZones, evening, [])).toEqual({ due_in_window: 0, due_outside_window: 0, leads_without_zone: 0, next_window_at: null });
  });

  it("answers outside_lead_windows, with the earliest opening, when no due record is inside its lead's window", () => {
    const status = sendingStatus(snapshot({ now: evening, schedule: leadZones, leadWindows: { dueInWindow: 0, nextWindowAt: tokyoOpens } }));
    expect(status).toEqual({ code: "outside_lead_windows", message: "No due lead is inside its own sending hours now", next_send_at: tokyoOpens });
    expect(sendingStatus(snapshot({ now: evening, schedule: leadZones, leadWindows: { dueInWindow: 1, nextWindowAt: tokyoOpens } }))).toMatchObject({ code: "sending" });
    // Without lead zones the campaign's own window decides, as before.
    expect(sendingStatus(snapshot({ now: at("2026-03-09T23:00:00Z"), schedule }))).toMatchObject({ code: "outside_window" });
  });

  it("answers a mailbox outside_window when none of its due records is inside its lead's window, until the earliest opens", () => {
    const base = { ...mailbox, now: evening, disconnectMessage: null };
    const outside = mailboxSendingStatus({ ...base, campaigns: [{ schedule: leadZones, nextDueAt: evening - 60_000, leadWindows: { anyInWindow: false, nextWindowAt: tokyoOpens } }] });
    expect(outside).toEqual({ code: "outside_window", message: "No due lead of this mailbox is inside its sending window now", next_send_at: tokyoOpens });
    const inside = mailboxSendingStatus({ ...base, campaigns: [{ schedule: leadZones, nextDueAt: evening - 60_000, leadWindows: { anyInWindow: true, nextWindowAt: tokyoOpens } }] });
    expect(inside).toMatchObject({ code: "sending", next_send_at: evening });
  });
});
