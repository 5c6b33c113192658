import { fileEnv } from "../helpers";
import { sql } from "drizzle-orm";
import { describe, expect, it } from "vitest";
import { database } from "../../src/platform/db";

describe("database()", () => {
  it("builds drizzle once per D1 binding and keeps serving queries through it", async () => {
    const first = database(fileEnv().DB);
    expect(database(fileEnv().DB)).toBe(first);
    expect(first.$client).toBe(fileEnv().DB);
    const row = await first.get<{ one: number }>(sql`SELECT 1 AS one`);
    expect(row.one).toBe(1);
    // Another binding object (as a test double or a second database would be) gets its own instance.
    const other = Object.create(fileEnv().DB) as D1Database;
    expect(database(other)).not.toBe(first);
  });
});
