import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "../env";
import { validationHook } from "./validation";

/** Every route module builds on this, so all of them validate and fail the same way. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

export const ErrorBody = z.object({ error: z.string() }).openapi("Error");
export const MessageBody = z.object({ message: z.string() }).openapi("Unauthorized");
export const ValidationErrorBody = z
  .object({
    error: z.literal("Validation failed"),
    details: z.array(z.object({ path: z.string(), message: z.string() })),
  })
  .openapi("ValidationError");
export const RateLimitBody = z
  .object({ error: z.literal("Rate limit exceeded"), retry_after: z.number().int() })
  .openapi("RateLimitExceeded");

const ERROR_RESPONSES = {
  400: { description: "Bad request", schema: ErrorBody },
  401: { description: "Missing or invalid API key", schema: MessageBody },
  404: { description: "Not found, or not the caller's", schema: ErrorBody },
  422: { description: "Validation failed", schema: ValidationErrorBody },
  429: { description: "Rate limit exceeded", schema: RateLimitBody },
  503: { description: "Unavailable (maintenance, or SECRETS_KEY not configured where a secret is stored)", schema: ErrorBody },
} as const;

type ErrorStatus = keyof typeof ERROR_RESPONSES;

export function json<T extends z.ZodType>(schema: T, description: string) {
  return { description, content: { "application/json": { schema } } };
}

type ErrorResponse = ReturnType<typeof json<(typeof ERROR_RESPONSES)[ErrorStatus]["schema"]>>;

/** The documented error responses of a route. */
export function errorResponses<S extends ErrorStatus>(...statuses: S[]): Record<S, ErrorResponse> {
  const responses: Partial<Record<S, ErrorResponse>> = {};
  for (const status of statuses) {
    responses[status] = json(ERROR_RESPONSES[status].schema, ERROR_RESPONSES[status].description);
  }
  return responses as Record<S, ErrorResponse>;
}

export function jsonBody<T extends z.ZodType>(schema: T) {
  return { required: true, content: { "application/json": { schema } } };
}

/** A positive integer path parameter; anything else is a 422. */
export function pathId(name: string) {
  return z.coerce.number().int().positive().openapi({ param: { name, in: "path" }, example: 1 });
}

/** Query-string booleans accept true/false/1/0. */
export const queryBoolean = z
  .enum(["true", "false", "1", "0"])
  .transform((value) => value === "true" || value === "1");

export const API_KEY_SECURITY = [{ ApiKeyAuth: [] }];
