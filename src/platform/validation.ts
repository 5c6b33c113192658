import type { Hook } from "@hono/zod-openapi";
import type { z } from "zod";
import type { AppEnv } from "../env";
import { ApiError, type ValidationIssue } from "./errors";

export function toValidationIssues(error: z.ZodError): ValidationIssue[] {
  return error.issues.map((issue) => ({
    path: issue.path.map(String).join("."),
    message: issue.message,
  }));
}

/** Every route's zod failure becomes the contract's 422 body through the one error handler. */
// eslint-disable-next-line @typescript-eslint/no-explicit-any -- the hook serves every route, whatever its input types
export const validationHook: Hook<any, AppEnv, any, any> = (result) => {
  if (!result.success) throw ApiError.validation(toValidationIssues(result.error));
};
