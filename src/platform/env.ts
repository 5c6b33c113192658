import type { Vars } from "../config";
import type { Principal } from "./principal";
import type { RateLimitInfo } from "./rate-limit";

/**
 * The Worker's environment. Bindings are generated from wrangler.toml by `npm run types` (the
 * committed worker-configuration.d.ts; `npm run typecheck` fails while it is stale). Each queue's
 * message type belongs to the feature that sends and consumes it (its one send function names it). Vars and secrets are typed by Vars, all optional: config() parses
 * and defaults them, and a missing secret is a state the code answers (404, 503), not a type error.
 */
export interface Bindings extends Omit<SalvoEnv, keyof Vars>, Vars {}

/** Per-request values that middleware hands to handlers. */
interface Variables {
  requestId: string;
  principal: Principal;
  rateLimit: RateLimitInfo;
  /** Set when the request was authenticated by a web app session cookie (src/sessions/auth.ts) rather than a key. */
  sessionId?: number;
  /** A tracking hit judged a machine's (src/tracking/machine.ts), and why: its access log line says so. */
  machineHit?: string;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
