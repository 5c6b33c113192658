import fc from "fast-check";
import { beforeAll, describe, expect, it } from "vitest";
import { featureOf, type Feature } from "../features";
import { ADMIN_TOKEN, call, createClient, provisionAccount, type TestAccount } from "../helpers";
import { describeWrites, writeLog, type WriteLog } from "../write-log";

/**
 * Bad-input hardening, property-based, one feature per test file (test/features.ts) and one test per
 * operation of the served OpenAPI document: random and malformed input answers with the contract's
 * status and body, and a refusal writes nothing. Every operation runs the same seeded cases, so a
 * failure replays; test/fuzz/coverage.test.ts holds every operation to a file.
 */

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
  responses: Record<string, unknown>;
}
export type Document = { paths: Record<string, Record<string, Operation>> };

const RUNS_PER_OPERATION = 12;
const SEED = 20261122;

const scalar = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.integer({ min: -10, max: 2_000_000_000 }),
  fc.double({ noNaN: true }),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof(scalar, fc.array(scalar, { maxLength: 30 }), fc.dictionary(fc.string({ maxLength: 12 }), scalar, { maxKeys: 4 }));

function bodyFor(operation: Operation) {
  const properties = Object.keys(operation.requestBody?.content["application/json"]?.schema.properties ?? {});
  const shaped = properties.length
    ? fc.record(Object.fromEntries(properties.map((name) => [name, value])), { requiredKeys: [] })
    : fc.dictionary(fc.string({ maxLength: 12 }), value, { maxKeys: 5 });
  return fc.oneof(
    shaped.map((body) => ({ raw: JSON.stringify(body) })),
    fc.jsonValue().map((body) => ({ raw: JSON.stringify(body) })),
    fc.string({ maxLength: 60 }).map((raw) => ({ raw })),
    fc.constant({ raw: "" }),
  );
}

const pathValue = fc.oneof(
  fc.integer({ min: -5, max: 2_000_000_000 }).map(String),
  fc.string({ minLength: 1, maxLength: 20 }).map(encodeURIComponent),
  fc.constantFrom("0", "1", "1.5", "1e3", "%20", "null"),
);

function expectContractBody(status: number, body: unknown, label: string) {
  expect(status, label).not.toBe(500);
  expect(status, label).toBeLessThan(500);
  if (status >= 200 && status < 300) return;
  expect([400, 401, 404, 422, 429], label).toContain(status);
  const record = body as Record<string, unknown>;
  if (status === 401) expect(typeof record.message, label).toBe("string");
  else expect(typeof record.error, label).toBe("string");
  if (status === 422) {
    expect(record.error, label).toBe("Validation failed");
    expect(Array.isArray(record.details), label).toBe(true);
  }
}

export async function servedDocument(): Promise<Document> {
  return (await (await call("/openapi.json")).json()) as Document;
}

export function operationsOf(document: Document) {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
  );
}

async function fuzzOperation(account: TestAccount, log: WriteLog, path: string, method: string, operation: Operation) {
  const pathNames = (operation.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
  const queryNames = (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
  const request = fc.record({
    params: fc.tuple(...pathNames.map(() => pathValue)),
    query: fc.dictionary(fc.constantFrom("junk", ...queryNames), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
    body: operation.requestBody ? bodyFor(operation) : fc.constant(null),
  });
  const statuses: number[] = [];
  await log.reset();
  await fc.assert(
    fc.asyncProperty(request, async ({ params, query, body }) => {
      let url = path;
      pathNames.forEach((name, i) => (url = url.replace(`{${name}}`, params[i]!)));
      const search = new URLSearchParams(query);
      // The API's routes take the account's key, the operator's the admin token: a bearer token on an
      // API route would be read as its key (and refused before the route saw the input).
      const api = url.startsWith("/api/");
      if (api) search.set("api_key", account.apiKey);
      const label = `${method} ${url}?${search} ${body?.raw ?? ""}`;
      const response = await call(`${url}?${search}`, {
        method,
        headers: { "Content-Type": "application/json", ...(api ? {} : { Authorization: `Bearer ${ADMIN_TOKEN}` }) },
        rawBody: body?.raw || undefined,
      });
      const text = await response.text();
      const parsed = text && response.headers.get("Content-Type")?.includes("json") ? JSON.parse(text) : text;
      statuses.push(response.status);
      expectContractBody(response.status, parsed, label);
      const written = await log.take();
      if (response.status >= 400) expect(describeWrites(written), `${label} refused with ${response.status} but wrote`).toBe("");
    }),
    { numRuns: RUNS_PER_OPERATION, seed: SEED },
  );
  // A case refused at authentication tested nothing of the route.
  expect(statuses.filter((status) => status !== 401), "no case got past authentication").not.toEqual([]);
}

/** Declares one feature's fuzz test: call it (awaited) at the top of test/fuzz/<feature>.test.ts. */
export async function fuzzSuite(feature: Feature) {
  const operations = operationsOf(await servedDocument()).filter(({ path }) => featureOf(path) === feature);
  describe(`bad-input hardening (property-based): ${feature}`, () => {
    let account: TestAccount;
    let log: WriteLog;
    beforeAll(async () => {
      log = await writeLog();
      account = await provisionAccount({ rate_limit_per_minute: 100_000, rate_limit_burst: 10_000 });
      await createClient(account.apiKey);
    });

    it("has operations", () => expect(operations.length).toBeGreaterThan(0));

    for (const { path, method, operation } of operations) {
      it(`${method} ${path}`, () => fuzzOperation(account, log, path, method, operation), 120_000);
    }
  });
}
