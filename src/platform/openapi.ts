import { OpenAPIHono, z } from "@hono/zod-openapi";
import type { AppEnv } from "./env";
import { iso, parseInstant } from "./time";
import { validationHook } from "./validation";

/** Every route module builds on this, so all of them validate and fail the same way. */
export function createRouter() {
  return new OpenAPIHono<AppEnv>({ defaultHook: validationHook });
}

const ErrorBody = z.object({ error: z.string() }).openapi("Error");
const MessageBody = z.object({ message: z.string() }).openapi("Unauthorized");
const ValidationErrorBody = z
  .object({
    error: z.literal("Validation failed"),
    details: z.array(z.object({ path: z.string(), message: z.string() })),
  })
  .openapi("ValidationError");
const RateLimitBody = z
  .object({ error: z.literal("Rate limit exceeded"), retry_after: z.number().int() })
  .openapi("RateLimitExceeded");

const ERROR_RESPONSES = {
  400: { description: "Bad request", schema: ErrorBody },
  401: { description: "Missing or invalid API key", schema: MessageBody },
  404: { description: "Not found, or not the caller's", schema: ErrorBody },
  422: { description: "Validation failed", schema: ValidationErrorBody },
  429: { description: "Rate limit exceeded", schema: RateLimitBody },
  502: { description: "A mail server did not take the message (its own words in `error`)", schema: ErrorBody },
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

/**
 * What the reference says about an operation, for routes a helper builds: a stable camelCase
 * `operationId`, a one-line `summary`, a `description` (its rules and notable errors), whether it is
 * an extension of the hosted API, and a request `example`.
 */
export interface OperationWords {
  operationId: string;
  summary: string;
  description?: string;
  extension?: boolean;
  example?: unknown;
}

/** The createRoute fields of an operation's words (the example goes to its body: `jsonBody`). */
export function operationWords(words: OperationWords) {
  return {
    operationId: words.operationId,
    summary: words.summary,
    ...(words.description !== undefined && { description: words.description }),
    ...(words.extension && { "x-salvo-extension": true }),
  };
}

/** A required JSON body; `example` is what the reference shows (else one is made from the schema). */
export function jsonBody<T extends z.ZodType>(schema: T, example?: unknown) {
  return { required: true, content: { "application/json": example === undefined ? { schema } : { schema, example } } };
}

/** An optional JSON body (absent or empty means none); `example` as for `jsonBody`. */
export function optionalJsonBody<T extends z.ZodType>(schema: T, example?: unknown) {
  return { required: false, content: { "application/json": example === undefined ? { schema } : { schema, example } } };
}

/**
 * Plain decimal digits, canonical form: no sign, spaces, exponent, hex, fraction or leading zero
 * (so `24.0`, ` 24`, `1e3`, `0x10`, `+5` and `024` are all refused, and one id has one spelling).
 * At most 16 digits, then the number must be a safe integer.
 */
const DECIMAL_DIGITS = /^(0|[1-9][0-9]{0,15})$/;

function decimalInteger() {
  return z
    .string()
    .regex(DECIMAL_DIGITS, "Must be a decimal integer")
    .transform(Number)
    .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER));
}

/** A positive integer path parameter; anything else is a 422. */
export function pathId(name: string) {
  return decimalInteger()
    .pipe(z.number().positive())
    .openapi({ param: { name, in: "path" }, type: "integer", minimum: 1, example: 1 });
}

/** A positive integer id in the query string, held to the same digits-only rule as path ids. */
export function queryId() {
  return decimalInteger().pipe(z.number().positive()).openapi({ type: "integer", minimum: 1 });
}

/** An id in a JSON body: a number or its decimal string (the hosted service's clients send either). */
export const BodyId = z
  .union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^[1-9][0-9]{0,15}$/, "Must be a decimal integer").transform(Number)])
  .openapi({ description: "A number or its decimal string" });

/** A query-string count (offset, limit) in [min, max]: digits only. */
export function queryCount(min: number, max = Number.MAX_SAFE_INTEGER) {
  return decimalInteger().pipe(z.number().min(min).max(max)).openapi({ type: "integer", minimum: min, maximum: max });
}

const INSTANT_WORDS = "ISO 8601 date-time; a time without a zone is read as UTC";

/**
 * An instant in a body or query string: any ISO 8601 date-time (`parseInstant`), passed on as the UTC
 * string timestamps leave the API in, so no handler reads a zone or depends on the runtime's.
 * Documented as a plain string: JSON Schema's `date-time` would require the zone this takes as optional.
 */
export function instant(description?: string) {
  return z
    .string()
    .transform((text, context) => {
      const at = parseInstant(text);
      if (at !== null) return iso(at);
      context.issues.push({ code: "custom", message: "Must be an ISO 8601 date-time", input: text });
      return z.NEVER;
    })
    .openapi({ description: description === undefined ? INSTANT_WORDS : `${description} (${INSTANT_WORDS})`, example: "2027-01-01T09:00:00Z" });
}

/** Query-string booleans accept true/false/1/0. */
export const queryBoolean = z
  .enum(["true", "false", "1", "0"])
  .transform((value) => value === "true" || value === "1");

/** Any one of: the X-API-Key header, a bearer token, or the api_key query parameter. */
export const API_KEY_SECURITY: Record<string, string[]>[] = [{ ApiKeyHeader: [] }, { ApiKeyBearer: [] }, { ApiKeyAuth: [] }];
