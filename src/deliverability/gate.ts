import { createMiddleware } from "hono/factory";
import { database } from "../platform/db";
import type { AppEnv } from "../platform/env";
import { ApiError } from "../platform/errors";
import { deliverabilityEnabled } from "./store";

/** Deliverability testing is arranged per account; without it every route here is a 404. */
export const deliverabilityGate = createMiddleware<AppEnv>(async (c, next) => {
  if (!(await deliverabilityEnabled(database(c.env.DB), c.get("principal").accountId))) {
    throw ApiError.notFound("Deliverability testing is not enabled for this account");
  }
  await next();
});
