import { createApp } from "./app";
import type { Bindings } from "./env";
import { runScheduled } from "./jobs/scheduled";

export { AuthFailureLimiter, KeyGate } from "./rate-limiter";

const app = createApp();

export default {
  fetch: app.fetch,
  scheduled: (controller, env) => runScheduled(controller, env),
} satisfies ExportedHandler<Bindings>;
