import { describe, expect, it } from "vitest";
import { RETRY_DELAYS_MS, TOKEN_RETRY_MS, failureOutcome, type Attempt } from "../../src/engine/outcome";
import { CONNECTION_RETRY_MS } from "../../src/mailboxes/hold";
import type { SmtpFailure, SmtpFailureKind } from "../../src/mail/smtp-replies";

const NOW = Date.parse("2031-03-03T10:00:00Z");
const MINUTE = 60_000;

const failure = (kind: SmtpFailureKind, text = "the server's words"): SmtpFailure => ({ kind, code: kind === "connection" || kind === "unconfirmed" ? null : 450, text });
const attempt = (overrides: Partial<Attempt> = {}): Attempt => ({
  recordId: 7,
  messageRowId: 70,
  step: 1,
  pinned: false,
  attempt: 1,
  now: NOW,
  next: { nextStep: 2, nextDueAt: NOW + 3 * 86_400_000 },
  oauth: false,
  ...overrides,
});

describe("what a failed SMTP transaction makes of its record", () => {
  it("a refused login suspends the mailbox with the server's words; the email waits, its attempt not counted, a first step back to rotation", () => {
    const verdict = failureOutcome(failure("auth_failed", "535 5.7.8 bad credentials"), attempt());
    expect(verdict).toEqual({
      outcome: { kind: "deferred", recordId: 7, messageRowId: 70, error: "535 5.7.8 bad credentials", retryAt: NOW, unpin: true, countAttempt: false },
      bounce: false,
      suspend: "535 5.7.8 bad credentials",
      oauthRefusal: null,
      stop: true,
      retryAt: null,
      hold: null,
    });
    // A follow-up keeps its mailbox (moving it would break the thread), and so does a first step pinned to it before its claim (a subsequence's).
    expect(failureOutcome(failure("auth_failed"), attempt({ step: 2 })).outcome).toMatchObject({ kind: "deferred", unpin: false });
    expect(failureOutcome(failure("auth_failed"), attempt({ pinned: true })).outcome).toMatchObject({ kind: "deferred", retryAt: NOW, unpin: false });
  });

  it("a refused OAuth token is the token's, not a suspension: the pass stops and comes back in seconds with a refreshed one; a first step goes back to rotation at once", () => {
    const verdict = failureOutcome(failure("auth_failed", "535 5.7.8 invalid token"), attempt({ oauth: true }));
    expect(verdict).toEqual({
      outcome: { kind: "deferred", recordId: 7, messageRowId: 70, error: "535 5.7.8 invalid token", retryAt: NOW, unpin: true, countAttempt: false },
      bounce: false,
      suspend: null,
      oauthRefusal: "535 5.7.8 invalid token",
      stop: true,
      retryAt: NOW + TOKEN_RETRY_MS,
      hold: null,
    });
    // A follow-up keeps its mailbox and waits for the refreshed token.
    expect(failureOutcome(failure("auth_failed"), attempt({ step: 2, oauth: true })).outcome).toMatchObject({ kind: "deferred", retryAt: NOW + TOKEN_RETRY_MS, unpin: false });
  });

  it("an unreachable server stops the pass and tries again in 5 minutes, the attempt not counted", () => {
    const verdict = failureOutcome(failure("connection", "connect timed out"), attempt({ step: 3 }));
    expect(verdict).toEqual({
      outcome: { kind: "deferred", recordId: 7, messageRowId: 70, error: "connect timed out", retryAt: NOW + CONNECTION_RETRY_MS, unpin: false, countAttempt: false },
      bounce: false,
      suspend: null,
      oauthRefusal: null,
      stop: true,
      retryAt: NOW + 5 * MINUTE,
      hold: { until: NOW + 5 * MINUTE, reason: "connect timed out" },
    });
  });

  it.each([
    { what: "closing the channel or busy for the session (a 4xx before the recipient)", code: 421, text: "421 4.7.0 Try again later, closing connection.", minutes: 5 },
    { what: "refusing the mailbox's own volume (a 5xx that is not the lead's)", code: 550, text: "550 5.4.5 Daily user sending limit exceeded. - gsmtp", minutes: 60 },
  ])("a server $what stops the pass and holds the mailbox, no attempt counted, even the fifth: a first step goes back to rotation at once, a follow-up waits for its mailbox", ({ code, text, minutes }) => {
    for (const step of [1, 2]) {
      expect(failureOutcome({ kind: "unavailable", code, text }, attempt({ step, attempt: 5 }))).toEqual({
        outcome: { kind: "deferred", recordId: 7, messageRowId: 70, error: text, retryAt: step === 1 ? NOW : NOW + minutes * MINUTE, unpin: step === 1, countAttempt: false },
        bounce: false,
        suspend: null,
        oauthRefusal: null,
        stop: true,
        retryAt: NOW + minutes * MINUTE,
        hold: { until: NOW + minutes * MINUTE, reason: text },
      });
    }
  });

  it("a 4xx for the recipient backs off 5, 15, 60, 240, 720 minutes by attempt, then fails the email; the pass goes on", () => {
    const delays = [1, 2, 3, 4, 5].map((n) => {
      const verdict = failureOutcome(failure("transient"), attempt({ attempt: n }));
      expect(verdict).toMatchObject({ stop: false, suspend: null, bounce: false });
      expect(verdict.outcome).toMatchObject({ kind: "deferred", unpin: false, countAttempt: true });
      return verdict.outcome.kind === "deferred" ? (verdict.outcome.retryAt - NOW) / MINUTE : null;
    });
    expect(delays).toEqual([5, 15, 60, 240, 720]);
    expect(RETRY_DELAYS_MS).toHaveLength(5);
    expect(failureOutcome(failure("transient", "451 busy"), attempt({ attempt: 6 }))).toEqual({
      outcome: { kind: "failed", recordId: 7, messageRowId: 70, error: "451 busy" },
      bounce: false,
      suspend: null,
      oauthRefusal: null,
      stop: false,
      retryAt: null,
      hold: null,
    });
  });

  it("a refused recipient is a BOUNCE; any other 5xx fails the email; neither stops the pass", () => {
    expect(failureOutcome(failure("recipient_rejected", "550 5.1.1 no such user"), attempt())).toEqual({
      outcome: { kind: "bounced", recordId: 7, messageRowId: 70, error: "550 5.1.1 no such user" },
      bounce: true,
      suspend: null,
      oauthRefusal: null,
      stop: false,
      retryAt: null,
      hold: null,
    });
    expect(failureOutcome(failure("permanent", "554 5.7.1 relay denied"), attempt())).toEqual({
      outcome: { kind: "failed", recordId: 7, messageRowId: 70, error: "554 5.7.1 relay denied" },
      bounce: false,
      suspend: null,
      oauthRefusal: null,
      stop: false,
      retryAt: null,
      hold: null,
    });
  });

  it("an answer lost after the message was handed over leaves it in doubt: never sent again, the record moves on, the pass stops", () => {
    const verdict = failureOutcome(failure("unconfirmed", "the server closed the connection"), attempt());
    expect(verdict).toEqual({
      outcome: { kind: "unconfirmed", recordId: 7, messageRowId: 70, error: "the server closed the connection", nextStep: 2, nextDueAt: NOW + 3 * 86_400_000 },
      bounce: false,
      suspend: null,
      oauthRefusal: null,
      stop: true,
      retryAt: NOW + CONNECTION_RETRY_MS,
      hold: null,
    });
  });
});
