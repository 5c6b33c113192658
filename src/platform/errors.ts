import type { ContentfulStatusCode } from "hono/utils/http-status";

export interface ValidationIssue {
  path: string;
  message: string;
}

/**
 * The one error type. Each carries the exact status and JSON body the contract prescribes,
 * so handlers throw and the single onError handler answers.
 */
export class ApiError extends Error {
  constructor(
    readonly status: ContentfulStatusCode,
    readonly body: Record<string, unknown>,
    readonly headers: Record<string, string> = {},
  ) {
    super(typeof body.error === "string" ? body.error : String(body.message ?? status));
  }

  static badRequest(error: string): ApiError {
    return new ApiError(400, { error });
  }

  /** Part three's refusal (CONTRACT, sections 18-23): section 0's `{error}` plus the hosted pages' `ok: false` and `message`. */
  static refused(status: ContentfulStatusCode, error: string): ApiError {
    return new ApiError(status, { error, ok: false, message: error });
  }

  static unauthorized(message: string): ApiError {
    return new ApiError(401, { message });
  }

  static notFound(error: string): ApiError {
    return new ApiError(404, { error });
  }

  static validation(details: ValidationIssue[]): ApiError {
    return new ApiError(422, { error: "Validation failed", details });
  }

  static rateLimited(retryAfterSeconds: number, headers: Record<string, string> = {}): ApiError {
    return new ApiError(
      429,
      { error: "Rate limit exceeded", retry_after: retryAfterSeconds },
      { ...headers, "Retry-After": String(retryAfterSeconds) },
    );
  }

  static unavailable(retryAfterSeconds: number): ApiError {
    return new ApiError(
      503,
      { error: "Service temporarily unavailable" },
      { "Retry-After": String(retryAfterSeconds) },
    );
  }
}
