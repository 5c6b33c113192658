import { config } from "../config";
import { utf8Length } from "./bytes";
import type { Bindings } from "./env";

/**
 * Message bodies kept in R2 (the BODIES binding) once they are larger than the deployment's
 * threshold (BODY_OFFLOAD_BYTES), so D1 holds only a reference: `salvo-body:` + the object's key,
 * in the very column (or payload field) the body would have taken. The object is always written
 * before the D1 batch that stores its reference, so a reference never names a missing object (an
 * object whose batch failed is an orphan, harmless). Every reader turns references back into the
 * text with `readBodies`/`withBodies`/`withPayloadBodies`; a reference whose object is gone reads
 * as an empty body rather than failing the reader.
 *
 * Keys are `bodies/<account id>/<uuid>`: a reader resolves only references under its own account,
 * and an account's objects can be listed (and swept) by prefix.
 */
export const BODY_REF = "salvo-body:";

/** Where bodies go: the bucket and the threshold (null: every body stays in D1). */
export interface BodyStore {
  bucket: R2Bucket | undefined;
  offloadBytes: number | null;
}

/** The deployment's body store: the BODIES bucket and BODY_OFFLOAD_BYTES. */
export function bodyStore(env: Bindings): BodyStore {
  return { bucket: env.BODIES, offloadBytes: config(env).bodyOffloadBytes };
}

function isRef(value: unknown): value is string {
  return typeof value === "string" && value.startsWith(BODY_REF);
}

function accountPrefix(accountId: number): string {
  return `bodies/${accountId}/`;
}

/**
 * The value to store for a body: itself, or a reference once the body is written to R2. A body
 * that begins like a reference is always offloaded, so a stored value that does is ours.
 */
export async function storeBody(store: BodyStore, accountId: number, body: string | null): Promise<string | null> {
  if (body === null || !store.bucket) return body;
  // A UTF-16 unit is at most 3 UTF-8 bytes: most bodies are judged without counting.
  const large = store.offloadBytes !== null && body.length * 3 > store.offloadBytes && utf8Length(body) > store.offloadBytes;
  if (!large && !body.startsWith(BODY_REF)) return body;
  const key = `${accountPrefix(accountId)}${crypto.randomUUID()}`;
  await store.bucket.put(key, body, { httpMetadata: { contentType: "text/plain; charset=utf-8" } });
  return `${BODY_REF}${key}`;
}

/** Several bodies stored side by side (their objects written in parallel); same order as given. */
export function storeBodies(store: BodyStore, accountId: number, bodies: (string | null)[]): Promise<(string | null)[]> {
  return Promise.all(bodies.map((body) => storeBody(store, accountId, body)));
}

/** The texts behind the references among `values` (others are left out), read in parallel. */
export async function readBodies(bucket: R2Bucket | undefined, accountId: number, values: Iterable<unknown>): Promise<Map<string, string>> {
  const refs = [...new Set([...values].filter(isRef))];
  const texts = new Map<string, string>();
  if (refs.length === 0) return texts;
  const prefix = accountPrefix(accountId);
  await Promise.all(
    refs.map(async (ref) => {
      const key = ref.slice(BODY_REF.length);
      if (!bucket || !key.startsWith(prefix)) return;
      const object = await bucket.get(key);
      // Gone (its rows are being deleted, or swept): an empty body, not a failed read.
      texts.set(ref, object ? await object.text() : "");
    }),
  );
  return texts;
}

/** Who reads bodies back: the bucket, and the account whose references it may resolve. */
export interface BodyReader {
  bucket: R2Bucket | undefined;
  accountId: number;
}

/** `withBodies` for a reader. */
export function readBack<T extends object>(reader: BodyReader, rows: T[], fields: (keyof T)[]): Promise<T[]> {
  return withBodies(reader.bucket, reader.accountId, rows, fields);
}

/** Rows with the named string fields read back from R2 where they hold a reference (the rows are changed in place). */
export async function withBodies<T extends object>(bucket: R2Bucket | undefined, accountId: number, rows: T[], fields: (keyof T)[]): Promise<T[]> {
  const texts = await readBodies(
    bucket,
    accountId,
    rows.flatMap((row) => fields.map((field) => row[field])),
  );
  if (texts.size === 0) return rows;
  for (const row of rows) {
    for (const field of fields) {
      const value = row[field];
      if (isRef(value) && texts.has(value)) (row as Record<keyof T, unknown>)[field] = texts.get(value);
    }
  }
  return rows;
}

function collectRefs(value: unknown, into: Set<string>): void {
  if (isRef(value)) into.add(value);
  else if (Array.isArray(value)) for (const item of value) collectRefs(item, into);
  else if (value !== null && typeof value === "object") for (const item of Object.values(value)) collectRefs(item, into);
}

/** A JSON value with every string that `replacements` names, at any depth, replaced. */
function swapStrings(value: unknown, replacements: Map<string, string>): unknown {
  if (typeof value === "string") return replacements.get(value) ?? value;
  if (Array.isArray(value)) return value.map((item) => swapStrings(item, replacements));
  if (value !== null && typeof value === "object") return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, swapStrings(v, replacements)]));
  return value;
}

/** A JSON payload (a webhook delivery's) with every reference in it, at any depth, read back. */
export async function withPayloadBodies<T>(bucket: R2Bucket | undefined, accountId: number, payload: T): Promise<T> {
  const refs = new Set<string>();
  collectRefs(payload, refs);
  if (refs.size === 0) return payload;
  return swapStrings(payload, await readBodies(bucket, accountId, refs)) as T;
}

/**
 * A payload built in memory from bodies that were then offloaded: each string equal to one of
 * them becomes its reference (a preview cut from a body is not equal, and stays).
 */
export function payloadWithRefs<T>(payload: T, refsByBody: Map<string, string>): T {
  if (refsByBody.size === 0) return payload;
  return swapStrings(payload, refsByBody) as T;
}
