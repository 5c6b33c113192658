import { DurableObject } from "cloudflare:workers";
import { resolveKey, type ShardedOwner } from "./resolve";
import type { KeyKind } from "./rules";
import { budgetWorthWriting, spend, type Budget, type BudgetState, type Decision } from "../platform/rate-limit";
import { config, type Vars } from "../config";

type Admission =
  | { outcome: "unknown" }
  | { outcome: "admitted" | "limited"; owner: GateOwner; budget: Budget; decision: Decision };

/** What the objects read from the environment (not the Worker's Bindings: that type names these classes). */
type GateEnv = Vars & { DB: D1Database; DIRECTORY: D1Database };

/** Owners cached before shards carry no shard: they were all on shard 0. */
type GateOwner = Omit<ShardedOwner, "shard"> & { shard?: number };

interface CachedOwner {
  owner: GateOwner;
  /** When D1 last confirmed the owner (epoch ms). */
  checkedAt: number;
}

/** What a key's object holds: in its SQLite storage (the truth), and in memory while it lives. */
interface GateState {
  revoked: boolean;
  owner: CachedOwner | undefined;
  /** Bumped by every invalidate, so a D1 read that raced one is not cached. */
  generation: number;
  budget: BudgetState | undefined;
}

/**
 * One object per API key (named by the key's digest). It both resolves the key and spends its
 * budget, so a request costs one round trip. It caches the key's owner; every route that deletes,
 * resets, deactivates a key or disables an account tells it at once (revoke: never again;
 * invalidate: look again), and the cache is trusted only for KEY_REVALIDATE_SECONDS, after which
 * the next request reads the row again, so a row deleted by any other path stops the key within
 * that bound. State lives in the object's SQLite storage and is read once when the object starts;
 * memory holds the live copy, so a request reads no storage. The key's standing is written at once;
 * its budget when `budgetWorthWriting` says (at once near the limit, otherwise at most once a second).
 */
export class KeyGate extends DurableObject<GateEnv> {
  private loaded: GateState | undefined;
  /** When the budget last went to storage (-Infinity: not since the object started). */
  private budgetWrittenAt = -Infinity;

  private get kv() {
    return this.ctx.storage.kv;
  }

  private get state(): GateState {
    this.loaded ??= {
      revoked: Boolean(this.kv.get("revoked")),
      owner: this.kv.get<CachedOwner>("owner"),
      generation: this.kv.get<number>("generation") ?? 0,
      budget: this.kv.get<BudgetState>("budget"),
    };
    return this.loaded;
  }

  async admit(kind: KeyKind, keyHash: string, now = Date.now()): Promise<Admission> {
    if (this.state.revoked) return { outcome: "unknown" };
    const { keyRevalidateMs: revalidateMs, rateLimit } = config(this.env);
    const cached = this.state.owner;
    const fresh = cached && now >= cached.checkedAt && now - cached.checkedAt < revalidateMs;
    const owner = fresh ? cached.owner : await this.lookUp(kind, keyHash, now);
    if (!owner) return { outcome: "unknown" };
    const budget = {
      perMinute: owner.rateLimitPerMinute ?? rateLimit.perMinute,
      burst: owner.rateLimitBurst ?? rateLimit.burst,
    };
    // No await from here on: the read-modify-write of the budget is atomic within the object.
    const decision = spend(budget, this.state.budget, now);
    this.state.budget = decision.state;
    if (budgetWorthWriting(decision, budget, this.budgetWrittenAt, now)) {
      this.kv.put("budget", decision.state);
      this.budgetWrittenAt = now;
    }
    return { outcome: decision.admitted ? "admitted" : "limited", owner, budget, decision };
  }

  /** The key's value is gone for good (deleted, or reset to a new value). */
  async revoke(): Promise<void> {
    this.state.owner = undefined;
    this.state.revoked = true;
    this.kv.delete("owner");
    this.kv.put("revoked", true);
  }

  /** The key's standing changed (status, account disabled); the next request reads it again. */
  async invalidate(): Promise<void> {
    this.state.owner = undefined;
    this.state.generation += 1;
    this.kv.delete("owner");
    this.kv.put("generation", this.state.generation);
  }

  private async lookUp(kind: KeyKind, keyHash: string, now: number): Promise<ShardedOwner | null> {
    const generation = this.state.generation;
    const owner = await resolveKey(this.env, kind, keyHash);
    // A revoke or invalidate that landed during the D1 read wins over what the read saw.
    const unchanged = !this.state.revoked && this.state.generation === generation;
    if (owner && unchanged) {
      this.state.owner = { owner, checkedAt: now };
      this.kv.put("owner", this.state.owner);
    } else if (unchanged) {
      this.state.owner = undefined;
      this.kv.delete("owner");
    }
    return unchanged ? owner : null;
  }
}

/** One object per client IP: counts failed authentications so keys cannot be guessed. */
export class AuthFailureLimiter extends DurableObject<GateEnv> {
  async recordFailure(now = Date.now()): Promise<Decision> {
    const perMinute = config(this.env).authFailuresPerMinute;
    const budget = { perMinute, burst: perMinute };
    const decision = spend(budget, this.ctx.storage.kv.get<BudgetState>("budget"), now);
    this.ctx.storage.kv.put("budget", decision.state);
    return decision;
  }
}
