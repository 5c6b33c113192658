import { createRouter } from "../platform/openapi";
import { actionRoutes } from "./action-routes";
import { ignoreRoutes } from "./ignore-routes";
import { savedViewRoutes } from "./saved-view-routes";
import { crmRoutes } from "./crm-routes";
import { subsequenceRoutes } from "./subsequence-routes";
import { historyRoutes } from "./history-routes";
import { conversationRoutes, listingRoutes } from "./listing-routes";
import { taskRoutes } from "./task-routes";

export { conversationRoutes };

/** The master inbox: listings, the actions that move conversations between them, tasks, and a lead's thread. */
export const inboxRoutes = createRouter().route("/", listingRoutes).route("/", actionRoutes).route("/", ignoreRoutes).route("/", savedViewRoutes).route("/", taskRoutes).route("/", historyRoutes)
  .route("/", crmRoutes)
  .route("/", subsequenceRoutes);
