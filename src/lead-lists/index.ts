import { createRouter } from "../platform/openapi";
import { leadListImportRoutes } from "./import-routes";
import { leadListPushRoutes } from "./push-routes";
import { leadListRoutes } from "./routes";

/** Lead lists: the lists and their members, CSV and JSON imports, and pushes between lists and campaigns. */
export const leadListFeatureRoutes = createRouter().route("/", leadListRoutes).route("/", leadListImportRoutes).route("/", leadListPushRoutes);
