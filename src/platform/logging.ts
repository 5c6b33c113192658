import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";

export type LogLevel = "info" | "warn" | "error";

/** One JSON object per line, so Workers Logs and `wrangler tail` can filter on any field. */
export function log(level: LogLevel, message: string, fields: Record<string, unknown> = {}): void {
  const line = JSON.stringify({ level, message, time: new Date().toISOString(), ...fields });
  if (level === "error") console.error(line);
  else if (level === "warn") console.warn(line);
  else console.log(line);
}

/**
 * A path as the access log keeps it: the tracking links' tokens (`/t/o/…`, `/t/c/…`, `/u/…`) are
 * credentials (a logged unsubscribe token would let anyone reading logs unsubscribe that lead).
 */
export function loggedPath(pathname: string): string {
  return pathname.replace(/^\/(t\/[oc]|u)\/[^/]+/, "/$1/:token");
}

/** Access log: the path is logged without its query string (which carries the API key) or link tokens. */
export const accessLog = createMiddleware<AppEnv>(async (c, next) => {
  const started = Date.now();
  await next();
  const principal = c.get("principal");
  log(c.res.status >= 500 ? "error" : "info", "request", {
    request_id: c.get("requestId"),
    method: c.req.method,
    path: loggedPath(new URL(c.req.url).pathname),
    status: c.res.status,
    duration_ms: Date.now() - started,
    account_id: principal?.accountId,
    client_id: principal?.clientId ?? undefined,
  });
});
