import { eq } from "drizzle-orm";
import { createMiddleware } from "hono/factory";
import { database } from "../platform/db";
import { accounts } from "../db/schema";
import type { AppEnv } from "../env";
import { ApiError } from "../platform/errors";

/** Deliverability testing is arranged per account; without it every route here is a 404. */
export const deliverabilityGate = createMiddleware<AppEnv>(async (c, next) => {
  const account = await database(c.env.DB)
    .select({ enabled: accounts.deliverabilityEnabled })
    .from(accounts)
    .where(eq(accounts.id, c.get("principal").accountId))
    .get();
  if (!account?.enabled) throw ApiError.notFound("Deliverability testing is not enabled for this account");
  await next();
});
