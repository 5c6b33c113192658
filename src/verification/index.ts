/** Email verification and list hygiene (CONTRACT 22): routes, background jobs, and the one check other features ask. */
export { verificationRoutes } from "./routes";
export { isVerifiedInvalid } from "./store";
