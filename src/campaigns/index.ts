import { createRouter } from "../platform/openapi";
import { campaignRoutes } from "./routes";
import { lifecycleRoutes } from "./lifecycle-routes";
import { exportRoutes } from "./export-routes";
import { sendingRoutes } from "./sending-routes";

/** The campaign's own routes: create, read, schedule and settings, lifecycle, export. */
export const campaignFeatureRoutes = createRouter()
  .route("/", sendingRoutes)
  .route("/", lifecycleRoutes)
  .route("/", exportRoutes)
  .route("/", campaignRoutes);
