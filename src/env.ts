import type { Principal } from "./http/auth";

/** Bindings and vars declared in wrangler.toml, plus secrets from `wrangler secret put`. */
export interface Bindings {
  DB: D1Database;
  ASSETS: Fetcher;
  MAINTENANCE_MODE?: string;
  ADMIN_TOKEN?: string;
}

/** Per-request values that middleware hands to handlers. */
export interface Variables {
  requestId: string;
  principal: Principal;
}

export interface AppEnv {
  Bindings: Bindings;
  Variables: Variables;
}
