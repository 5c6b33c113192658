import { z, type Hook } from "@hono/zod-openapi";
import { createMiddleware } from "hono/factory";
import type { AppEnv } from "./env";
import { ApiError, type ValidationIssue } from "./errors";

/**
 * A missing field says "Required" (the hosted service's word, and what clients show their users),
 * never zod's "Invalid input": also for fields that take one of several forms (unions). Messages a
 * schema sets itself still win.
 */
const REQUIRED = "Required";

z.config({
  customError: (issue) => (issue.input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_union") ? REQUIRED : undefined),
});

function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.flatMap((issue) => flatten(issue, []));
}

type Issue = z.core.$ZodIssue;

/** The form's own type did not fit the input (an object sent where an array is one form): that form says nothing useful. */
function isWrongForm(issues: Issue[]): boolean {
  return issues.length === 1 && issues[0]!.path.length === 0 && issues[0]!.code === "invalid_type";
}

/**
 * A value that takes several forms (a union: `{sequences}` or a bare array, a number or its string) and fits none
 * is answered with what is wrong in the form the input was meant as, so the caller sees the missing or bad field
 * (`sequences: Required`) rather than zod's "Invalid input" at the union's place. Forms whose own type does not fit
 * are left out; of the rest, the one with the fewest problems (the first, when tied). When no form's type fits,
 * the message lists the types that would.
 */
function flatten(issue: Issue, prefix: PropertyKey[]): ValidationIssue[] {
  const path = [...prefix, ...issue.path];
  // "Required": the value is missing (customError above; zod drops an issue's input before it gets here).
  if (issue.code !== "invalid_union" || issue.message === REQUIRED || issue.errors.length === 0) {
    return [{ path: path.map(String).join("."), message: issue.message }];
  }
  const fitting = issue.errors.filter((issues) => !isWrongForm(issues));
  if (fitting.length === 0) {
    const expected = [...new Set(issue.errors.map((issues) => (issues[0] as { expected?: string }).expected))];
    const message = expected.every(Boolean) ? `Invalid input: expected ${expected.join(" or ")}` : issue.message;
    return [{ path: path.map(String).join("."), message }];
  }
  const closest = fitting.reduce((best, issues) => (issues.length < best.length ? issues : best));
  return closest.flatMap((inner) => flatten(inner, path));
}

/** Every route's zod failure becomes the contract's 422 body through the one error handler. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the hook serves every route, whatever its input types
export const validationHook: Hook<any, AppEnv, any, any> = (result) => {
  if (result.success) return;
  // zod-validator hands the hook the raw input too, though @hono/zod-openapi's Hook type leaves it out.
  const raw = (result as { data?: Record<string, string> }).data ?? {};
  if (result.target === "param" && Object.values(raw).some(isPathWord)) throw ApiError.notFound("Not found");
  throw ApiError.validation(toValidationIssues(result.error));
};

/**
 * A path segment in the hosted API's style (`all-leads-activities`, `leads-export`): a path that puts
 * one where a route has an id asked for a route this service does not have, so it answers like any
 * unknown path (compat rule C9) rather than with the id route's 422. A malformed id (`abc`, `1.5`) stays a 422.
 */
function isPathWord(value: string): boolean {
  return /^[a-z]+(?:[-_][a-z]+)+$/i.test(value);
}

const WHITE_SPACE = new Set([0x20, 0x09, 0x0a, 0x0d]);

/**
 * An empty body (no bytes, or only white space) is no body, whatever its Content-Type says: some of
 * the hosted service's clients send `Content-Type: application/json` on every request. The request
 * goes on without body and Content-Type, so an optional body takes its default and a required one
 * answers exactly as when it is left out (422 naming its fields), never "Malformed JSON".
 * Mounted after authentication, so a stranger's body is never read.
 */
export const emptyBodyIsNoBody = createMiddleware<AppEnv>(async (c, next) => {
  if (c.req.raw.body !== null && c.req.header("Content-Type") !== undefined) {
    // Cached by the request: the route's validator reads the same bytes again without a copy from the wire.
    const bytes = new Uint8Array(await c.req.arrayBuffer());
    if (bytes.every((byte) => WHITE_SPACE.has(byte))) {
      const headers = new Headers(c.req.raw.headers);
      headers.delete("Content-Type");
      headers.delete("Content-Length");
      c.req.raw = new Request(c.req.raw.url, { method: c.req.method, headers });
    }
  }
  await next();
});
