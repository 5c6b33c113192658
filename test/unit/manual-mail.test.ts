import { describe, expect, it } from "vitest";
import { collapseRecipients, MANUAL_RECIPIENT_LIMIT, manualPace, recipientProblem, retryAt, type MailboxDay } from "../../src/manual-mail/rules";

const NOW = Date.parse("2026-05-01T12:00:00.000Z");
const DAY_END = Date.parse("2026-05-02T00:00:00.000Z");

function day(more: Partial<MailboxDay> = {}): MailboxDay {
  return { now: NOW, dayEnd: DAY_END, maxEmailPerDay: 2, gapMinutes: 0, manualToday: 0, lastSentAt: null, hold: null, ...more };
}

describe("the manual-send rule", () => {
  it("lower-cases recipients and keeps each address once: To first, then Cc, then Bcc", () => {
    expect(collapseRecipients({ to: " Ann@X.example ", cc: ["ann@x.example", "Bob@X.example", "bob@x.example", ""], bcc: ["BOB@x.example", "cy@x.example", "ANN@X.EXAMPLE"] })).toEqual({
      to: "ann@x.example",
      cc: ["bob@x.example"],
      bcc: ["cy@x.example"],
    });
  });

  it("takes at most 10 recipients together and names the first address that may not be reached", () => {
    const cc = Array.from({ length: MANUAL_RECIPIENT_LIMIT - 1 }, (_, i) => `p${i}@x.example`);
    expect(recipientProblem({ to: "a@x.example", cc, bcc: [] }, new Map())).toBeNull();
    expect(recipientProblem({ to: "a@x.example", cc, bcc: ["one-more@x.example"] }, new Map())).toBe(
      "A manual email may go to at most 10 recipients (to, cc and bcc together); this one has 11",
    );
    const refusals = new Map([
      ["p3@x.example", "opted_out" as const],
      ["p5@x.example", "blocked" as const],
    ]);
    expect(recipientProblem({ to: "a@x.example", cc: cc.slice(0, 3), bcc: ["p5@x.example"] }, refusals)).toBe("The recipient p5@x.example is on the block list");
    expect(recipientProblem({ to: "a@x.example", cc: cc.slice(0, 4), bcc: ["p5@x.example"] }, refusals)).toBe("The recipient p3@x.example has unsubscribed or bounced");
  });

  it("allows as many manual deliveries a day as the cap, whatever campaign mail sent, never part of an email", () => {
    expect(manualPace(day({ manualToday: 1 }), 1)).toEqual({ kind: "now" });
    expect(manualPace(day({ manualToday: 1 }), 2)).toEqual({
      kind: "refused",
      message: "The mailbox has made 1 of its 2 manual deliveries for today (UTC, one per recipient); this email needs 2: the allowance renews at 2026-05-02T00:00:00.000Z",
    });
    expect(manualPace(day({ manualToday: 2 }), 1).kind).toBe("refused");
  });

  it("keeps the mailbox's gap from its last send of any kind, and has none when the gap is 0", () => {
    expect(manualPace(day({ gapMinutes: 10, lastSentAt: NOW - 60_000 }), 1)).toEqual({
      kind: "wait",
      until: NOW + 9 * 60_000,
      message: "The mailbox waits 10 minutes between sends: it may send again at 2026-05-01T12:09:00.000Z",
    });
    expect(manualPace(day({ gapMinutes: 1, lastSentAt: NOW - 60_000 }), 1)).toEqual({ kind: "now" });
    // A send dated ahead (a test's clock, or an engine within the 5-minute margin) does not hold a mailbox without a gap.
    expect(manualPace(day({ gapMinutes: 0, lastSentAt: NOW + 86_400_000 }), 1)).toEqual({ kind: "now" });
    // Past the allowance it is refused outright, not queued.
    expect(manualPace(day({ gapMinutes: 10, lastSentAt: NOW - 60_000, manualToday: 2 }), 1).kind).toBe("refused");
  });

  it("waits for the end of its server's hold (and of the gap, if later), with the server's words; the allowance still refuses first", () => {
    const hold = { until: NOW + 5 * 60_000, reason: "421 4.7.0 Too much mail from this sender" };
    expect(manualPace(day({ hold }), 1)).toEqual({
      kind: "wait",
      until: hold.until,
      message: "The mailbox's mail server refused its sending for now (421 4.7.0 Too much mail from this sender): it may send again at 2026-05-01T12:05:00.000Z",
    });
    expect(manualPace(day({ hold, gapMinutes: 10, lastSentAt: NOW - 60_000 }), 1)).toMatchObject({ kind: "wait", until: NOW + 9 * 60_000 });
    expect(manualPace(day({ hold, manualToday: 2 }), 1).kind).toBe("refused");
  });
});

describe("a send nobody waits on, refused for now", () => {
  const MINUTE = 60_000;
  const due = Date.parse("2031-03-03T10:00:00Z");
  it("goes again at its mailbox's hold's end, within a day of first coming due", () => {
    expect(retryAt({ heldUntil: due + 5 * MINUTE, transient: false }, due, due)).toBe(due + 5 * MINUTE);
    expect(retryAt({ heldUntil: due + 25 * 60 * MINUTE, transient: false }, due, due)).toBeNull();
  });
  it("refused for its recipient (greylisting): after 5 minutes, then after as long as it has waited, until the day is spent", () => {
    const tries: number[] = [];
    let now = due;
    for (let at = retryAt({ heldUntil: null, transient: true }, due, now); at !== null; at = retryAt({ heldUntil: null, transient: true }, due, now)) tries.push((now = at));
    expect(tries.slice(0, 4).map((t) => (t - due) / MINUTE)).toEqual([5, 10, 20, 40]);
    expect(tries.length).toBeLessThanOrEqual(10);
    expect(tries.at(-1)! - due).toBeLessThanOrEqual(24 * 60 * MINUTE);
  });
  it("refused for good: it fails", () => {
    expect(retryAt({ heldUntil: null, transient: false }, due, due)).toBeNull();
  });
});
