import { createRouter } from "../../http/openapi";
import { analyticsRoutes } from "./analytics";
import { campaignRoutes } from "./campaigns";
import { eventRoutes } from "./events";
import { leadRoutes } from "./leads";

/** Campaigns and what hangs off them: leads, events and analytics. */
export const campaignDataRoutes = createRouter()
  .route("/", analyticsRoutes)
  .route("/", eventRoutes)
  .route("/", leadRoutes)
  .route("/", campaignRoutes);
