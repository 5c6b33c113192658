import type { Vars } from "./config";
import type { Principal } from "./platform/principal";
import type { RateLimitInfo } from "./platform/rate-limit";
import type { TrackedEvent } from "./tracking/queue-message";
import type { TriageMessage } from "./triage/queue-message";
import type { DeliveryMessage } from "./webhooks/queue-message";

/**
 * The Worker's environment. Bindings are generated from wrangler.toml by `npm run types` (the
 * committed worker-configuration.d.ts; `npm run typecheck` fails while it is stale); the queues
 * get their message types here. Vars and secrets are typed by Vars, all optional: config() parses
 * and defaults them, and a missing secret is a state the code answers (404, 503), not a type error.
 */
export interface Bindings extends Omit<SalvoEnv, "WEBHOOK_QUEUE" | "TRACKING_QUEUE" | "TRIAGE_QUEUE" | keyof Vars>, Vars {
  WEBHOOK_QUEUE: Queue<DeliveryMessage>;
  /** Opens and clicks, recorded in batches by src/tracking/store.ts. */
  TRACKING_QUEUE: Queue<TrackedEvent>;
  /** Replies to categorise and replay chunks, consumed by src/triage/queue.ts. */
  TRIAGE_QUEUE: Queue<TriageMessage>;
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
