import { createRoute, z } from "@hono/zod-openapi";
import pkg from "../../package.json";
import { createRouter, json } from "../platform/openapi";

export const VERSION = pkg.version;

const health = createRoute({
  method: "get",
  path: "/health",
  operationId: "getHealth",
  description: "No API key. Answers `{ok: true, version}` while the Worker runs, even in maintenance mode.",
  tags: ["Operations"],
  summary: "Liveness check",
  responses: { 200: json(z.object({ ok: z.boolean(), version: z.string() }).openapi("Health"), "The service is up") },
});

/**
 * Swagger UI is served from our own static assets (public/vendor, copied from npm on install),
 * so the page works with no network; its online validator badge is turned off for the same reason.
 */
const DOCS_PAGE = `<!doctype html>
<html lang="en">
  <head>
    <meta charset="utf-8" />
    <meta name="viewport" content="width=device-width, initial-scale=1" />
    <title>Salvo API reference</title>
    <link rel="icon" type="image/png" href="/vendor/swagger-ui/favicon-32x32.png" />
    <link rel="stylesheet" href="/vendor/swagger-ui/swagger-ui.css" />
  </head>
  <body>
    <div id="api-reference"></div>
    <script src="/vendor/swagger-ui/swagger-ui-bundle.js"></script>
    <script>
      window.ui = SwaggerUIBundle({
        url: "/openapi.json",
        dom_id: "#api-reference",
        validatorUrl: null,
        deepLinking: true,
        docExpansion: "list",
        persistAuthorization: true,
        tryItOutEnabled: false,
      });
    </script>
  </body>
</html>
`;

export const opsRoutes = createRouter();

opsRoutes.openapi(health, (c) => c.json({ ok: true, version: VERSION }, 200));

// The web app (public/index.html, built from web/) answers `/` as a static asset before the Worker runs;
// this answers only where the app is not built (the Workers-runtime tests): the reference.
opsRoutes.get("/", (c) => c.redirect("/docs", 302));

opsRoutes.get("/docs", (c) => c.html(DOCS_PAGE));
