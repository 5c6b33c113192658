import { drizzle, type DrizzleD1Database } from "drizzle-orm/d1";
import * as schema from "../db/schema";

export type Database = DrizzleD1Database<typeof schema> & { $client: D1Database };

/**
 * Building drizzle over the whole schema walks every table's definition (measured at 16% of an
 * isolate's busy time when done per call), so each D1 binding gets its instance once and keeps it
 * for the isolate's life; it holds no per-request state.
 */
const instances = new WeakMap<D1Database, Database>();

export function database(d1: D1Database): Database {
  let db = instances.get(d1);
  if (!db) {
    db = drizzle(d1, { schema });
    instances.set(d1, db);
  }
  return db;
}
