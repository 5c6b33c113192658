// The app talks to Salvo only through its public API, typed by the generated client's path types
// (src/client/schema.ts, from /openapi.json). On the app's own origin the session cookie
// authenticates; the key itself is never kept by the browser.
import createClient from "openapi-fetch";
import { signal } from "@preact/signals";
import type { components, paths } from "../../src/client/schema";

export type Schemas = components["schemas"];

export type { paths };

export interface Session {
  id: number;
  kind: "account" | "client";
  key_hint: string;
  account_id: number;
  client_id: number | null;
  user_agent: string | null;
  created_at: string;
  last_seen_at: string;
  expires_at: string;
  current: boolean;
}

/** undefined while the app asks who it is; null when signed out. */
export const session = signal<Session | null | undefined>(undefined);

export const api = createClient<paths>({ baseUrl: location.origin, credentials: "same-origin" });

api.use({
  onResponse({ response, request }) {
    // The session ended elsewhere (signed out in another tab, revoked, expired, its key deleted): back to sign-in.
    if (response.status === 401 && !request.headers.has("X-API-Key")) session.value = null;
    return response;
  },
});

/** The API's own words for a refusal: `error`, `message`, and the first validation detail. */
export function explain(error: unknown, status?: number): string {
  if (error && typeof error === "object") {
    const body = error as { error?: string; message?: string; details?: { path: string; message: string }[] };
    const detail = body.details?.[0];
    if (detail) return `${body.error ?? "Invalid"}: ${detail.path ? `${detail.path}: ` : ""}${detail.message}`;
    if (body.error) return body.error;
    if (body.message) return body.message;
  }
  if (error instanceof Error) return error.message;
  return status ? `The server answered ${status}` : "Something went wrong";
}

export class ApiFailure extends Error {}

/** Unwraps an openapi-fetch answer: the data, or an ApiFailure carrying the API's words. */
export async function must<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (error !== undefined || !response.ok) throw new ApiFailure(explain(error, response.status));
  return data as T;
}

export async function signIn(apiKey: string): Promise<void> {
  const { data, error, response } = await api.POST("/api/v1/sessions", { headers: { "X-API-Key": apiKey } });
  if (!response.ok || !data) throw new ApiFailure(response.status === 401 ? "That key was not accepted" : explain(error, response.status));
  session.value = data.data as Session;
}

export async function whoAmI(): Promise<void> {
  const { data, response } = await api.GET("/api/v1/sessions/current");
  session.value = response.ok && data ? (data.data as Session) : null;
}

export async function signOut(): Promise<void> {
  await api.DELETE("/api/v1/sessions/current");
  session.value = null;
}
