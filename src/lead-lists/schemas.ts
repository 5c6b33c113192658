import { z } from "@hono/zod-openapi";

/** The shared rules' acknowledgement of a mutation. */
export const Ack = z.object({ ok: z.boolean(), success: z.boolean(), message: z.string() });
