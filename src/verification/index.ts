/** Email verification and list hygiene (CONTRACT 22): its routes and background jobs (manual sends refuse an address verified invalid in their own recipient check). */
export { verificationRoutes } from "./routes";
