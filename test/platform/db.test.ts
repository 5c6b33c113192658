import { env } from "cloudflare:test";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../src/platform/db";

describe("database()", () => {
  it("builds drizzle once per D1 binding and keeps serving queries through it", async () => {
    const first = database(env.DB);
    expect(database(env.DB)).toBe(first);
    expect(first.$client).toBe(env.DB);
    const row = await first.get<{ one: number }>(sql`SELECT 1 AS one`);
    expect(row.one).toBe(1);
    // Another binding object (as a test double or a second database would be) gets its own instance.
    const other = Object.create(env.DB) as D1Database;
    expect(database(other)).not.toBe(first);
  });
});
