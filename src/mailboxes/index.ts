import { createRouter } from "../platform/openapi";
import { campaignMailboxRoutes } from "./campaign-routes";
import { mailboxAllocationRoutes } from "./allocation-routes";
import { mailboxRoutes } from "./routes";
import { mailboxTagRoutes } from "./tag-routes";
import { mailboxWarmupRoutes } from "./warmup-routes";

/** Mailboxes: the tag routes' literal paths first, so `/email-accounts/tag-manager` and its siblings are never ids. */
export const mailboxFeatureRoutes = createRouter()
  .route("/", mailboxTagRoutes)
  .route("/", mailboxRoutes)
  .route("/", mailboxWarmupRoutes)
  .route("/", mailboxAllocationRoutes)
  .route("/", campaignMailboxRoutes);
