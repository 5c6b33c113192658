import { createRoute, z } from "@hono/zod-openapi";
import { API_KEY_SECURITY, createRouter, errorResponses, json } from "../platform/openapi";

const RateLimitStatus = z
  .object({
    limit: z.number().int().openapi({ description: "requests per 60 s" }),
    remaining: z.number().int(),
    reset: z.number().int().openapi({ description: "unix seconds when the budget is full again" }),
    burst: z.number().int().openapi({ description: "requests per second" }),
  })
  .openapi("RateLimitStatus");

const readRateLimit = createRoute({
  method: "get",
  path: "/api/v1/rate-limit",
  operationId: "getRateLimit",
  description: "The calling key's budget after this request: `{limit, remaining, reset, burst}`. The same numbers ride on every authenticated " +
    "answer as `X-RateLimit-*` and `RateLimit`/`RateLimit-Policy` headers.",
  "x-salvo-extension": true,
  tags: ["Account"],
  summary: "The calling key's rate-limit budget (this request included)",
  security: API_KEY_SECURITY,
  responses: { 200: json(RateLimitStatus, "The key's budget"), ...errorResponses(401, 429) },
});

export const rateLimitRoutes = createRouter();

rateLimitRoutes.openapi(readRateLimit, (c) => {
  const { budget, decision } = c.get("rateLimit");
  return c.json(
    {
      limit: decision.limit,
      remaining: decision.remaining,
      reset: Math.floor(Date.now() / 1000) + decision.resetSeconds,
      burst: budget.burst,
    },
    200,
  );
});
