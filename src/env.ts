import type { Vars } from "./config";
import type { Principal } from "./platform/principal";
import type { AuthFailureLimiter, KeyGate } from "./keys/gate.do";
import type { RateLimitInfo } from "./platform/rate-limit";
import type { TrackedEvent } from "./tracking/queue-message";
import type { DeliveryMessage } from "./webhooks/queue-message";

/** Bindings declared in wrangler.toml, plus the vars and secrets (read through config()). */
export interface Bindings extends Vars {
  DB: D1Database;
  ASSETS: Fetcher;
  KEY_GATE: DurableObjectNamespace<KeyGate>;
  AUTH_FAILURES: DurableObjectNamespace<AuthFailureLimiter>;
  WEBHOOK_QUEUE: Queue<DeliveryMessage>;
  /** Opens and clicks, recorded in batches by src/tracking/store.ts. */
  TRACKING_QUEUE: Queue<TrackedEvent>;
  /** One MailboxSender per mailbox (src/engine/sender.do.ts; typed where it is used, in engine/wake.ts). */
  MAILBOX_SENDER: DurableObjectNamespace;
}

/** Per-request values that middleware hands to handlers. */
export interface Variables {
  requestId: string;
  principal: Principal;
  rateLimit: RateLimitInfo;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
