import { env } from "./helpers";
import { allShards, shardDatabase } from "../src/platform/shards";

/**
 * Every change to the test databases' rows (every shard's and the directory's), logged by triggers
 * the test itself creates (never in migrations): an INSERT, a DELETE, and an UPDATE that changes a value or the rowid. A file's database
 * is its own, so a check reads two watermarks of one small table instead of every row of every table.
 * The log's triggers fire in the same statement as the write, so no write escapes it, whichever
 * connection, Durable Object or queue consumer made it.
 */

export interface Write {
  table: string;
  op: "INSERT" | "UPDATE" | "DELETE";
  row: number | null;
}

const LOG = "_test_writes";

export interface WriteLog {
  /** Forgets the writes so far: a check starts here. */
  reset(): Promise<void>;
  /** The writes since the previous call (or reset), in order. */
  take(): Promise<Write[]>;
}

const quote = (name: string) => `"${name.replace(/"/g, '""')}"`;
const literal = (text: string) => `'${text.replace(/'/g, "''")}'`;

/** Every database a write could land in. */
function watched(): D1Database[] {
  return [...allShards(env).map((shard) => shardDatabase(env, shard)), env.DIRECTORY];
}

async function install(db: D1Database) {
  await db.prepare(`CREATE TABLE IF NOT EXISTS ${LOG} (seq INTEGER PRIMARY KEY AUTOINCREMENT, tbl TEXT NOT NULL, op TEXT NOT NULL, row INTEGER)`).run();
  const tables = await db.prepare(
    // Not the full-text indexes (virtual tables and their shadow tables take no triggers): they are
    // written with the rows they index, which the log sees.
    `SELECT name, upper(sql) LIKE '%WITHOUT ROWID%' AS keyed FROM sqlite_master m WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%' AND name NOT IN ('d1_migrations', '${LOG}')
       AND NOT EXISTS (SELECT 1 FROM sqlite_master v WHERE v.type = 'table' AND v.sql LIKE 'CREATE VIRTUAL TABLE%' AND (m.name = v.name OR substr(m.name, 1, length(v.name) + 1) = v.name || '_'))
     ORDER BY name`,
  ).all<{ name: string; keyed: number }>();
  const columns = await db.batch<{ name: string }>(tables.results.map(({ name }) => db.prepare(`SELECT name FROM pragma_table_info(${literal(name)})`)));
  const statements = tables.results.flatMap(({ name, keyed }, i) => {
    // A WITHOUT ROWID table's rows have no number: its writes are logged without one.
    const rowid = keyed ? [] : ["rowid"];
    const changed = [...rowid, ...columns[i]!.results.map((c) => quote(c.name))].map((c) => `OLD.${c} IS NOT NEW.${c}`).join(" OR ");
    const log = (op: string, row: string) => `BEGIN INSERT INTO ${LOG} (tbl, op, row) VALUES (${literal(name)}, '${op}', ${row}); END`;
    return [
      `CREATE TRIGGER IF NOT EXISTS ${quote(`${LOG}_${name}_insert`)} AFTER INSERT ON ${quote(name)} ${log("INSERT", keyed ? "NULL" : "NEW.rowid")}`,
      `CREATE TRIGGER IF NOT EXISTS ${quote(`${LOG}_${name}_update`)} AFTER UPDATE ON ${quote(name)} WHEN ${changed} ${log("UPDATE", keyed ? "NULL" : "NEW.rowid")}`,
      `CREATE TRIGGER IF NOT EXISTS ${quote(`${LOG}_${name}_delete`)} AFTER DELETE ON ${quote(name)} ${log("DELETE", keyed ? "NULL" : "OLD.rowid")}`,
    ].map((sql) => db.prepare(sql));
  });
  await db.batch(statements);
}

/**
 * Starts logging this file's database (every table that exists now, so call it after the
 * migrations, which the setup file applies; again in each file, as the next file's storage starts
 * empty while this module may stay loaded). One read per check: take() right after a request
 * returns what it wrote (and whatever else wrote meanwhile, which can only make a check stricter).
 */
export async function writeLog(): Promise<WriteLog> {
  const databases = watched();
  await Promise.all(databases.map(install));
  const seen = databases.map(() => 0);
  return {
    async reset() {
      for (const [i, db] of databases.entries()) seen[i] = (await db.prepare(`SELECT coalesce(max(seq), 0) AS seq FROM ${LOG}`).first<{ seq: number }>())!.seq;
    },
    async take() {
      const writes: Write[] = [];
      for (const [i, db] of databases.entries()) {
        const { results } = await db.prepare(`SELECT seq, tbl AS "table", op, row FROM ${LOG} WHERE seq > ? ORDER BY seq`)
          .bind(seen[i])
          .all<Write & { seq: number }>();
        seen[i] = results.at(-1)?.seq ?? seen[i]!;
        writes.push(...results.map(({ table, op, row }) => ({ table, op, row })));
      }
      return writes;
    },
  };
}

/** "events INSERT 12, events UPDATE 12": the writes, short enough for an assertion message. */
export function describeWrites(writes: Write[]): string {
  return writes.map((w) => `${w.table} ${w.op} ${w.row ?? ""}`.trim()).join(", ");
}
