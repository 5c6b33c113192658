import { z } from "@hono/zod-openapi";

/** An id in a body: a number or its decimal string (shared rules of sections 10-16). */
export const BodyId = z
  .union([z.number().int().positive().max(Number.MAX_SAFE_INTEGER), z.string().regex(/^[1-9][0-9]{0,15}$/, "Must be a decimal integer").transform(Number)])
  .openapi({ description: "A number or its decimal string" });

/** The shared rules' acknowledgement of a mutation. */
export const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() });
