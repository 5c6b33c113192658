import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { ADMIN_TOKEN, call, createClient, env, provisionAccount } from "./helpers";

interface Parameter {
  name: string;
  in: "path" | "query" | "header";
}
interface Operation {
  parameters?: Parameter[];
  requestBody?: { content: Record<string, { schema: { properties?: Record<string, unknown> } }> };
  responses: Record<string, unknown>;
}
type Document = { paths: Record<string, Record<string, Operation>> };

const RUNS_PER_OPERATION = 12;

/** Row counts of every table: a refused request must leave all of them as they were. */
async function tableCounts(): Promise<Record<string, number>> {
  const tables = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name <> 'd1_migrations'",
  ).all<{ name: string }>();
  const counts = await env.DB.batch<{ n: number }>(
    tables.results.map(({ name }) => env.DB.prepare(`SELECT count(*) AS n FROM "${name}"`)),
  );
  return Object.fromEntries(tables.results.map(({ name }, i) => [name, counts[i]!.results[0]!.n]));
}

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

describe("bad-input hardening (property-based)", () => {
  it("answers random and malformed input to every route with the contract's status and body, writing nothing when it refuses", async () => {
    const account = await provisionAccount({ rate_limit_per_minute: 100_000, rate_limit_burst: 10_000 });
    await createClient(account.apiKey);
    const document = (await (await call("/openapi.json")).json()) as Document;
    const operations = Object.entries(document.paths).flatMap(([path, methods]) =>
      Object.entries(methods).map(([method, operation]) => ({ path, method: method.toUpperCase(), operation })),
    );
    expect(operations.length).toBeGreaterThan(10);

    for (const { path, method, operation } of operations) {
      const pathNames = (operation.parameters ?? []).filter((p) => p.in === "path").map((p) => p.name);
      const queryNames = (operation.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const request = fc.record({
        params: fc.tuple(...pathNames.map(() => pathValue)),
        query: fc.dictionary(fc.constantFrom("junk", ...queryNames), fc.string({ maxLength: 30 }), { maxKeys: 4 }),
        body: operation.requestBody ? bodyFor(operation) : fc.constant(null),
      });
      await fc.assert(
        fc.asyncProperty(request, async ({ params, query, body }) => {
          let url = path;
          pathNames.forEach((name, i) => (url = url.replace(`{${name}}`, params[i]!)));
          const search = new URLSearchParams(query);
          if (url.startsWith("/api/")) search.set("api_key", account.apiKey);
          const label = `${method} ${url}?${search} ${body?.raw ?? ""}`;
          const before = await tableCounts();
          const response = await call(`${url}?${search}`, {
            method,
            headers: { "Content-Type": "application/json", Authorization: `Bearer ${ADMIN_TOKEN}` },
            rawBody: body?.raw || undefined,
          });
          const text = await response.text();
          const parsed = text && response.headers.get("Content-Type")?.includes("json") ? JSON.parse(text) : text;
          expectContractBody(response.status, parsed, label);
          if (response.status >= 400) expect(await tableCounts(), label).toEqual(before);
        }),
        { numRuns: RUNS_PER_OPERATION, seed: 20261122 },
      );
    }
  }, 300_000);
});
