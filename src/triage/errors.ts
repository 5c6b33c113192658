import { z } from "@hono/zod-openapi";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { ApiError } from "../platform/errors";
import { json } from "../platform/openapi";

/**
 * Part three's error body for the texts a hosted page quotes (CONTRACT, part three's preamble):
 * section 0's `{error}` plus `ok:false` and `message` with the same text.
 */
export function hostedError(status: ContentfulStatusCode, text: string): ApiError {
  return new ApiError(status, { error: text, ok: false, message: text });
}

const HostedErrorBody = z.object({ error: z.string(), ok: z.literal(false), message: z.string() }).openapi("HostedError");

export function hostedErrorResponse(description: string) {
  return json(HostedErrorBody, description);
}
