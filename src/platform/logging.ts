import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";

type LogLevel = "info" | "warn" | "error";

/** One JSON object per line, so Workers Logs and `wrangler tail` can filter on any field. */
export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

function decoded(segment: string): string {
  try {
    return decodeURIComponent(segment);
  } catch {
    return segment;
  }
}

/**
 * A path as the access log keeps it: the tracking links' tokens (`/t/o/…`, `/t/c/…`, `/u/…`) are
 * credentials (a logged unsubscribe token would let anyone reading logs unsubscribe that lead), and
 * so is an API key a caller wrote into the path (`/api/v1/<key>/campaigns`): any segment holding one
 * of `keyPrefixes`, encoded or not, in any case, is logged as `:key`.
 */
export function loggedPath(pathname: string, keyPrefixes: readonly string[] = []): string {
  const path = pathname.replace(/^\/(t\/[oc]|u)\/[^/]+/, "/$1/:token");
  const prefixes = keyPrefixes.map((prefix) => prefix.toLowerCase());
  return path
    .split("/")
    .map((segment) => (prefixes.some((prefix) => decoded(segment).toLowerCase().includes(prefix)) ? ":key" : segment))
    .join("/");
}

/**
 * Access log: the path is logged without its query string (which carries the API key), link tokens
 * or keys written into it (`keyPrefixes`: the API keys' prefixes, which src/keys/ owns).
 */
export const accessLog = (keyPrefixes: readonly string[]) =>
  createMiddleware<AppEnv>(async (c, next) => {
    const started = Date.now();
    await next();
    const principal = c.get("principal");
    log(c.res.status >= 500 ? "error" : "info", "request", {
      request_id: c.get("requestId"),
      method: c.req.method,
      path: loggedPath(new URL(c.req.url).pathname, keyPrefixes),
      status: c.res.status,
      duration_ms: Date.now() - started,
      account_id: principal?.accountId,
      client_id: principal?.clientId ?? undefined,
      machine_hit: c.get("machineHit"),
    });
  });
