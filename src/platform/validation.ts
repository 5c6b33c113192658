import { z, type Hook } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { ApiError, type ValidationIssue } from "./errors";

/**
 * A missing field says "Required" (the hosted service's word, and what clients show their users),
 * never zod's "Invalid input": also for fields that take one of several forms (unions). Messages a
 * schema sets itself still win.
 */
z.config({
  customError: (issue) => (issue.input === undefined && (issue.code === "invalid_type" || issue.code === "invalid_union") ? "Required" : undefined),
});

export function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
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
