import { createRouter } from "../platform/openapi";
import { leadChangeRoutes, leadLiteralChangeRoutes } from "./change-routes";
import { leadActivityRoutes, leadLookupRoutes } from "./lookup-routes";
import { leadFilterRoutes } from "./filter-routes";

/**
 * Lead operations under literal paths (`/campaigns/all-leads-activities`, `/campaigns/{id}/leads/filter`, ...): before
 * `/campaigns/{id}` and `/campaigns/{id}/leads/{email_lead_map_id}` (C9).
 */
export const leadLiteralRoutes = createRouter().route("/", leadActivityRoutes).route("/", leadFilterRoutes).route("/", leadLiteralChangeRoutes);

/**
 * Lead operations addressed by `{lead_id}`: after every router with a literal `/leads/<name>` path
 * (fetch-categories, the block list, ...), so those literals win (C9).
 */
export const leadOperationRoutes = createRouter().route("/", leadLookupRoutes).route("/", leadChangeRoutes);
