import { createRouter } from "../platform/openapi";
import { analyticsRoutes } from "../analytics/routes";
import { campaignRoutes } from "./routes";
import { lifecycleRoutes } from "./lifecycle-routes";
import { exportRoutes } from "./export-routes";
import { sendingRoutes } from "./sending-routes";
import { eventRoutes } from "../events/routes";
import { leadRoutes } from "../leads/routes";

/** Campaigns and what hangs off them: leads, events and analytics. */
export const campaignDataRoutes = createRouter()
  .route("/", analyticsRoutes)
  .route("/", eventRoutes)
  .route("/", leadRoutes)
  .route("/", sendingRoutes)
  .route("/", lifecycleRoutes)
  .route("/", exportRoutes)
  .route("/", campaignRoutes);
