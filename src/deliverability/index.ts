import { deliverabilityGate } from "./gate";
import { createRouter } from "../platform/openapi";
import { findingsRoutes } from "./findings-routes";
import { folderRoutes } from "./folder-routes";
import { mailboxReportRoutes } from "./mailbox-report-routes";
import { copyReportRoutes } from "./copy-report-routes";
import { providerRoutes } from "./provider-routes";
import { reportRoutes } from "./report-routes";
import { spamTestRoutes } from "./spam-test-routes";

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
  .route("/", mailboxReportRoutes)
  .route("/", copyReportRoutes)
  .route("/", reportRoutes)
  .route("/", findingsRoutes)
  .route("/", spamTestRoutes);
