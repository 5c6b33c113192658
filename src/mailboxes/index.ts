import { createRouter } from "../platform/openapi";
import { mailboxBulkRoutes } from "./bulk-routes";
import { mailboxMessageRoutes } from "./messages-routes";
import { campaignMailboxRoutes } from "./campaign-routes";
import { mailboxAllocationRoutes } from "./allocation-routes";
import { mailboxRoutes } from "./routes";
import { mailboxTagRoutes } from "./tag-routes";
import { mailboxWarmupRoutes } from "./warmup-routes";

/** Mailboxes: the literal paths first, so `/email-accounts/tag-manager`, `/email-accounts/fetch-account-reply` and their siblings are never ids. */
export const mailboxFeatureRoutes = createRouter()
  .route("/", mailboxBulkRoutes)
  .route("/", mailboxMessageRoutes)
  .route("/", mailboxTagRoutes)
  .route("/", mailboxRoutes)
  .route("/", mailboxWarmupRoutes)
  .route("/", mailboxAllocationRoutes)
  .route("/", campaignMailboxRoutes);
