import { createRouter } from "../platform/openapi";
import { campaignRoutes } from "./routes";
import { lifecycleRoutes } from "./lifecycle-routes";
import { exportRoutes } from "./export-routes";
import { sendingRoutes } from "./sending-routes";
import { campaignBulkRoutes } from "./bulk-routes";

/**
 * The campaign's own routes: create, read, schedule and settings, lifecycle, export; the bulk ones
 * (literal paths such as `/campaigns/folders`) first, so `/campaigns/{campaign_id}` never takes them.
 */
export const campaignFeatureRoutes = createRouter()
  .route("/", campaignBulkRoutes)
  .route("/", sendingRoutes)
  .route("/", lifecycleRoutes)
  .route("/", exportRoutes)
  .route("/", campaignRoutes);
