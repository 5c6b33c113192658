import type { Principal } from "./platform/principal";
import type { AuthFailureLimiter, KeyGate } from "./keys/gate.do";
import type { RateLimitInfo } from "./platform/rate-limit";
import type { DeliveryMessage } from "./webhooks/queue-message";

/** Bindings and vars declared in wrangler.toml, plus secrets from `wrangler secret put`. */
export interface Bindings {
  DB: D1Database;
  ASSETS: Fetcher;
  MAINTENANCE_MODE?: string;
  ADMIN_TOKEN?: string;
  KEY_GATE: DurableObjectNamespace<KeyGate>;
  AUTH_FAILURES: DurableObjectNamespace<AuthFailureLimiter>;
  RATE_LIMIT_PER_MINUTE?: string;
  RATE_LIMIT_BURST?: string;
  AUTH_FAILURES_PER_MINUTE?: string;
  /** Seconds a key's object trusts its cached owner before reading the key's row again (default 60). */
  KEY_REVALIDATE_SECONDS?: string;
  WEBHOOK_QUEUE: Queue<DeliveryMessage>;
  /** "true" (local development) admits http and loopback webhook URLs. */
  ALLOW_INSECURE_WEBHOOKS?: string;
  /** Secret: keys for secrets at rest, `kid:base64key[,kid:base64key...]`; the first encrypts (src/platform/crypto.ts). */
  SECRETS_KEY?: string;
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
