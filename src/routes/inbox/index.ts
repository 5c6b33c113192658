import { createRouter } from "../../http/openapi";
import { actionRoutes } from "./actions";
import { listingRoutes } from "./listings";
import { taskRoutes } from "./tasks";

/** The master inbox: listings, the actions that move conversations between them, and tasks. */
export const inboxRoutes = createRouter().route("/", listingRoutes).route("/", actionRoutes).route("/", taskRoutes);
