import { describe, expect, it } from "vitest";
import { fullBudget, rateLimitHeaders, spend, type Budget, type BudgetState } from "../../src/platform/rate-limit";

/** Spends `times` requests at one instant, returning the last decision. */
function spendMany(budget: Budget, state: BudgetState | undefined, now: number, times: number) {
  let decision = spend(budget, state, now);
  for (let i = 1; i < times; i += 1) decision = spend(budget, decision.state, now);
  return decision;
}

describe("fullBudget", () => {
  it("starts both buckets full at now", () => {
    expect(fullBudget({ perMinute: 60, burst: 5 }, 1_000)).toEqual({ minute: { tokens: 60, at: 1_000 }, second: { tokens: 5, at: 1_000 } });
  });
});

describe("spend", () => {
  const budget = { perMinute: 60, burst: 5 };

  it("admits a first request from a full budget and takes one token from each bucket", () => {
    expect(spend(budget, undefined, 0)).toEqual({
      admitted: true,
      state: { minute: { tokens: 59, at: 0 }, second: { tokens: 4, at: 0 } },
      limit: 60,
      remaining: 59,
      resetSeconds: 1,
      retryAfterSeconds: 0,
    });
  });

  it("refuses the request past the burst within a second, spending nothing, and asks for a one-second wait", () => {
    const fifth = spendMany(budget, undefined, 0, 5);
    expect(fifth.admitted).toBe(true);
    const sixth = spend(budget, fifth.state, 0);
    expect(sixth).toEqual({
      admitted: false,
      state: { minute: { tokens: 55, at: 0 }, second: { tokens: 0, at: 0 } },
      limit: 60,
      remaining: 55,
      resetSeconds: 5,
      retryAfterSeconds: 1,
    });
  });

  it("refills the burst bucket at burst tokens a second", () => {
    const drained = spendMany(budget, undefined, 0, 5).state;
    expect(spend(budget, drained, 100).admitted).toBe(false); // 0.5 of a token
    const refilled = spend(budget, drained, 200); // exactly one token back
    expect(refilled.admitted).toBe(true);
    expect(refilled.state.second).toEqual({ tokens: 0, at: 200 });
    expect(refilled.state.minute.tokens).toBeCloseTo(54.2, 10);
    expect(refilled.remaining).toBe(54);
  });

  it("refuses past the minute budget until a token returns, counting the wait from the minute bucket", () => {
    const small = { perMinute: 3, burst: 10 };
    const spent = spendMany(small, undefined, 0, 3).state;
    expect(spend(small, spent, 0)).toMatchObject({ admitted: false, remaining: 0, resetSeconds: 60, retryAfterSeconds: 20 });
    expect(spend(small, spent, 10_000)).toMatchObject({ admitted: false, retryAfterSeconds: 10 });
    expect(spend(small, spent, 20_000)).toMatchObject({ admitted: true, remaining: 0, resetSeconds: 60 });
  });

  it("asks for the longer of the two waits when both buckets are empty", () => {
    const one = { perMinute: 1, burst: 1 };
    const spent = spend(one, undefined, 0).state;
    expect(spend(one, spent, 0).retryAfterSeconds).toBe(60);
    expect(spend(one, spent, 59_001).retryAfterSeconds).toBe(1);
  });

  it("never refills past capacity, however long the caller was away", () => {
    const empty: BudgetState = { minute: { tokens: 0, at: 0 }, second: { tokens: 0, at: 0 } };
    const decision = spend(budget, empty, 3_600_000);
    expect(decision.state).toEqual({ minute: { tokens: 59, at: 3_600_000 }, second: { tokens: 4, at: 3_600_000 } });
  });

  it("reports whole remaining tokens and rounds the reset up", () => {
    const state: BudgetState = { minute: { tokens: 10, at: 0 }, second: { tokens: 5, at: 0 } };
    const decision = spend(budget, state, 500); // 10.5 tokens, minus one
    expect(decision.state.minute.tokens).toBe(9.5);
    expect(decision.remaining).toBe(9);
    expect(decision.resetSeconds).toBe(51);
  });

  it("neither refills nor moves a bucket's time back when the clock goes backwards", () => {
    const state: BudgetState = { minute: { tokens: 10, at: 5_000 }, second: { tokens: 2, at: 5_000 } };
    expect(spend(budget, state, 1_000).state).toEqual({ minute: { tokens: 9, at: 5_000 }, second: { tokens: 1, at: 5_000 } });
  });
});

describe("rateLimitHeaders", () => {
  it("gives the legacy and draft headers from a decision, the reset as an epoch second", () => {
    const budget = { perMinute: 60, burst: 5 };
    expect(rateLimitHeaders(spendMany(budget, undefined, 0, 3), budget, 1_700_000_000)).toEqual({
      "X-RateLimit-Limit": "60",
      "X-RateLimit-Remaining": "57",
      "X-RateLimit-Reset": "1700000003",
      "RateLimit-Policy": "60;w=60, 5;w=1",
      RateLimit: "limit=60, remaining=57, reset=3",
    });
  });
});
