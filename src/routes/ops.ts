import { createRoute, z } from "@hono/zod-openapi";
import pkg from "../../package.json";
import { createRouter, json } from "../http/openapi";

export const VERSION = pkg.version;

const health = createRoute({
  method: "get",
  path: "/health",
  tags: ["Operations"],
  summary: "Liveness check",
  responses: { 200: json(z.object({ ok: z.boolean(), version: z.string() }).openapi("Health"), "The service is up") },
});

/** Scalar is served from our own static assets (public/vendor), so the page works with no network. */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Salvo API reference</title>
  </head>
  <body>
    <div id="api-reference"></div>
    <script src="/vendor/scalar/standalone.js"></script>
    <script>
      Scalar.createApiReference("#api-reference", {
        url: "/openapi.json",
        withDefaultFonts: false,
        telemetry: false,
        agent: { disabled: true },
      });
    </script>
  </body>
</html>
`;

export const opsRoutes = createRouter();

opsRoutes.openapi(health, (c) => c.json({ ok: true, version: VERSION }, 200));

opsRoutes.get("/docs", (c) => c.html(DOCS_PAGE));
