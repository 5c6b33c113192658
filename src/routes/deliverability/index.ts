import { deliverabilityGate } from "../../http/deliverability-gate";
import { createRouter } from "../../http/openapi";
import { folderRoutes } from "./folders";
import { providerRoutes } from "./providers";
import { reportRoutes } from "./reports";
import { spamTestRoutes } from "./spam-tests";

/**
 * Deliverability ({delivery_url}): behind the account-level gate. Folder and catalogue routes
 * come before `spam-test/{spamTestId}` so their fixed paths win.
 */
export const deliverabilityRoutes = createRouter();
deliverabilityRoutes.use("/api/v1/spam-test/*", deliverabilityGate);
deliverabilityRoutes.use("/api/v1/smart-delivery/*", deliverabilityGate);
deliverabilityRoutes
  .route("/", providerRoutes)
  .route("/", folderRoutes)
  .route("/", reportRoutes)
  .route("/", spamTestRoutes);
