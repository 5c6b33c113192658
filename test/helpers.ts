import { env } from "cloudflare:test";
import { exports } from "cloudflare:workers";
import { expect } from "vitest";
import { onShard, shardCount } from "../src/platform/shards";

export const ADMIN_TOKEN = "test-admin-token";
const ORIGIN = "http://salvo.test";

export interface CallOptions {
  method?: string;
  body?: unknown;
  rawBody?: BodyInit;
  headers?: Record<string, string>;
  apiKey?: string;
  /** "manual" to see a redirect (else the runtime follows it, back into this Worker). */
  redirect?: "follow" | "manual";
}

function randomIp(): string {
  const [a, b, c] = crypto.getRandomValues(new Uint8Array(3));
  return `10.${a}.${b}.${c}`;
}

/** Sends a request through the Worker's own fetch entry point, exactly as a client would. */
export async function call(path: string, options: CallOptions = {}): Promise<Response> {
  const url = new URL(path, ORIGIN);
  if (options.apiKey !== undefined) url.searchParams.set("api_key", options.apiKey);
  // Each call from its own address, so failed-authentication limits per IP only bite where a test means them to.
  const headers: Record<string, string> = { "CF-Connecting-IP": randomIp(), ...options.headers };
  let body: BodyInit | undefined = options.rawBody;
  if (options.body !== undefined) {
    body = JSON.stringify(options.body);
    headers["Content-Type"] ??= "application/json";
  }
  return exports.default.fetch(new Request(url, { method: options.method ?? "GET", headers, body, redirect: options.redirect }));
}

export async function callJson<T = Record<string, unknown>>(path: string, options: CallOptions = {}) {
  const response = await call(path, options);
  return { response, status: response.status, body: (await response.json()) as T };
}

/**
 * The shard a test file's accounts live on: its path decides (half the files on each of the two
 * shards), so every file runs through the shard routing and a file that works on one shard only
 * because it is shard 0 fails on its own. TEST_SHARD (a binding) pins every file to one shard.
 */
export function fileShard(): number {
  const pinned = (env as { TEST_SHARD?: string }).TEST_SHARD;
  if (pinned !== undefined && pinned !== "") return Number(pinned);
  const path = (expect.getState().testPath ?? "").replace(/^.*\/test\//, "test/");
  let hash = 2166136261;
  for (const char of path) hash = Math.imul(hash ^ char.charCodeAt(0), 16777619) >>> 0;
  return hash % shardCount(env);
}

/** The environment of the test file's shard: what a test seeds or reads directly goes there. */
export function fileEnv(): typeof env {
  return onShard(env, fileShard());
}

let sequence = 0;

export interface TestAccount {
  id: number;
  email: string;
  apiKey: string;
}

export async function provisionAccount(overrides: Record<string, unknown> = {}): Promise<TestAccount> {
  sequence += 1;
  const email = `owner-${crypto.randomUUID()}-${sequence}@example.com`;
  const { status, body } = await callJson<{ id: number; email: string; api_key: string }>("/admin/v1/accounts", {
    method: "POST",
    headers: { Authorization: `Bearer ${ADMIN_TOKEN}` },
    body: { email, name: `Owner ${sequence}`, shard: fileShard(), ...overrides },
  });
  if (status !== 201) throw new Error(`provisioning failed with ${status}: ${JSON.stringify(body)}`);
  return { id: body.id, email: body.email, apiKey: body.api_key };
}

export async function createClient(apiKey: string, name = "Acme", email = "ops@acme.example") {
  const { status, body } = await callJson<{ id: number }>("/api/v1/client/save", {
    method: "POST",
    apiKey,
    body: { name, email },
  });
  if (status !== 200) throw new Error(`client creation failed with ${status}`);
  return body.id;
}

export async function createClientKey(apiKey: string, clientId: number, keyName = "integration") {
  const { status, body } = await callJson<{ data: { id: number; api_key: string } }>("/api/v1/client/api-key", {
    method: "POST",
    apiKey,
    body: { clientId, keyName },
  });
  if (status !== 200) throw new Error(`client key creation failed with ${status}`);
  return body.data;
}

/** One account with two clients, X and Y, each with a key of its own. */
export async function accountWithTwoClients() {
  const account = await provisionAccount();
  const x = await createClient(account.apiKey, "X", "x@x.example");
  const y = await createClient(account.apiKey, "Y", "y@y.example");
  const xKey = (await createClientKey(account.apiKey, x)).api_key;
  const yKey = (await createClientKey(account.apiKey, y)).api_key;
  return { account, apiKey: account.apiKey, x, y, xKey, yKey };
}

export { env };
