/**
 * Token buckets for API budgets: a per-minute bucket (the limit) and a per-second one (the burst).
 * A request is admitted when both hold a token, and then spends one from each. Pure: the Durable
 * Object supplies state and the clock.
 */

interface Bucket {
  tokens: number;
  /** ms epoch of the last refill */
  at: number;
}

export interface Budget {
  perMinute: number;
  burst: number;
}

export interface BudgetState {
  minute: Bucket;
  second: Bucket;
}

export interface Decision {
  admitted: boolean;
  state: BudgetState;
  limit: number;
  remaining: number;
  /** seconds until the minute bucket is full again */
  resetSeconds: number;
  /** seconds until a refused request may succeed; 0 when admitted */
  retryAfterSeconds: number;
}

const MINUTE_MS = 60_000;
const SECOND_MS = 1_000;

function refill(bucket: Bucket, capacity: number, windowMs: number, now: number): Bucket {
  const elapsed = Math.max(0, now - bucket.at);
  return { tokens: Math.min(capacity, bucket.tokens + (elapsed * capacity) / windowMs), at: Math.max(now, bucket.at) };
}

/** Time until a bucket holds `wanted` tokens, in ms. */
function waitFor(bucket: Bucket, wanted: number, capacity: number, windowMs: number): number {
  return bucket.tokens >= wanted ? 0 : ((wanted - bucket.tokens) * windowMs) / capacity;
}

export function fullBudget(budget: Budget, now: number): BudgetState {
  return { minute: { tokens: budget.perMinute, at: now }, second: { tokens: budget.burst, at: now } };
}

export function spend(budget: Budget, previous: BudgetState | undefined, now: number): Decision {
  const start = previous ?? fullBudget(budget, now);
  let minute = refill(start.minute, budget.perMinute, MINUTE_MS, now);
  let second = refill(start.second, budget.burst, SECOND_MS, now);
  const admitted = minute.tokens >= 1 && second.tokens >= 1;
  if (admitted) {
    minute = { ...minute, tokens: minute.tokens - 1 };
    second = { ...second, tokens: second.tokens - 1 };
  }
  const retryMs = admitted
    ? 0
    : Math.max(waitFor(minute, 1, budget.perMinute, MINUTE_MS), waitFor(second, 1, budget.burst, SECOND_MS));
  return {
    admitted,
    state: { minute, second },
    limit: budget.perMinute,
    remaining: Math.floor(minute.tokens),
    resetSeconds: Math.ceil(waitFor(minute, budget.perMinute, budget.perMinute, MINUTE_MS) / 1000),
    retryAfterSeconds: admitted ? 0 : Math.max(1, Math.ceil(retryMs / 1000)),
  };
}

/**
 * Whether a key's object writes its budget to storage after this decision: at once when a request is
 * refused or half the minute's budget is spent, otherwise at most once a second (a storage write per
 * request cost more of the object's CPU than the rest of the key's check: issue 27). Memory holds the
 * exact budget while the object lives; a crash forgets at most the last second's spending (at most
 * one burst), and only while more than half the minute's budget was left.
 */
export function budgetWorthWriting(decision: Decision, budget: Budget, writtenAt: number, now: number): boolean {
  return !decision.admitted || decision.remaining < budget.perMinute / 2 || now - writtenAt >= SECOND_MS || now < writtenAt;
}

/** The headers every authenticated answer carries (legacy X-RateLimit-* and the IETF draft's). */
export function rateLimitHeaders(decision: Decision, budget: Budget, nowSeconds: number): Record<string, string> {
  return {
    "X-RateLimit-Limit": String(decision.limit),
    "X-RateLimit-Remaining": String(decision.remaining),
    "X-RateLimit-Reset": String(nowSeconds + decision.resetSeconds),
    "RateLimit-Policy": `${budget.perMinute};w=60, ${budget.burst};w=1`,
    RateLimit: `limit=${decision.limit}, remaining=${decision.remaining}, reset=${decision.resetSeconds}`,
  };
}

/** The caller's budget after this request, for the headers and GET /api/v1/rate-limit. */
export interface RateLimitInfo {
  budget: Budget;
  decision: Decision;
}
