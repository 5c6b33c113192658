import createClient, { type Client } from "openapi-fetch";
import type { paths } from "./schema";

export type { paths as SalvoPaths } from "./schema";

export interface SalvoClientOptions {
  /** e.g. `https://api.salvo.example.com` or `http://127.0.0.1:8787` */
  baseUrl: string;
  /** An account key (`slv_acct_…`) or a client key (`slv_cli_…`). */
  apiKey: string;
  fetch?: typeof globalThis.fetch;
}

/**
 * A typed Salvo client: paths, parameters, bodies and responses are checked against the
 * OpenAPI document. The API key travels in the `X-API-Key` header on every request (never in the
 * URL, which proxies and logs keep).
 */
export function createSalvoClient(options: SalvoClientOptions): Client<paths> {
  const client = createClient<paths>({ baseUrl: options.baseUrl, fetch: options.fetch });
  client.use({
    onRequest({ request }) {
      request.headers.set("X-API-Key", options.apiKey);
      return request;
    },
  });
  return client;
}
