/**
 * What a move copies, read from the shard's own schema (so a table a later migration adds is moved
 * without a change here, or refused until it is classified): every table is the account's (it has
 * `account_id`, or is `accounts`), a child of the account's (reached through foreign keys), derived
 * (kept by triggers from the rows above, so the target rebuilds it as the rows go in), or shared by
 * every account (never moved).
 */

/** Kept by triggers; the column that ties a row to its account's rows, for the check after the copy. */
const DERIVED: Record<string, { column: string; parent: "campaigns" | "clients" | null; live: string }> = {
  event_hour_counts: { column: "campaign_id", parent: "campaigns", live: "total <> 0 OR human <> 0 OR counted <> 0" },
  event_spans: { column: "campaign_id", parent: "campaigns", live: "1" },
  credit_mailbox_hours: { column: "campaign_id", parent: "campaigns", live: "total <> 0 OR counted <> 0" },
  credit_send_quarters: { column: "campaign_id", parent: "campaigns", live: "total <> 0 OR counted <> 0" },
  credit_spans: { column: "campaign_id", parent: "campaigns", live: "1" },
  inbox_counts: { column: "account_id", parent: null, live: "n <> 0" },
  inbox_campaign_counts: { column: "campaign_id", parent: "campaigns", live: "n <> 0" },
  inbox_client_counts: { column: "client_id", parent: "clients", live: "n <> 0" },
};

/** Every account's, or nobody's: the operator's catalogues, caches, bookkeeping. */
const SHARED = new Set(["spam_providers", "seed_mailboxes", "event_span_kinds", "email_domain_checks", "ingest_marks", "account_moves", "d1_migrations"]);

/**
 * Writes the fence lets through: a webhook delivery's recorded attempt (its attempts count grows,
 * its attempt row goes in). A delivery whose post was in flight when the fence rose was sent; its
 * outcome must land, or it would be sent again from the new shard. These tables are copied last,
 * once every post in flight has ended (MOVE_WEBHOOK_GRACE_SECONDS), so what lands is copied.
 */
const FENCE_PASSES: Record<string, Partial<Record<"INSERT" | "UPDATE" | "DELETE", string>>> = {
  webhook_deliveries: { UPDATE: "NEW.attempts > OLD.attempts" },
  webhook_attempts: { INSERT: "1" },
};

/** Columns the target's triggers fill as the rows go in: inserted empty (events' credit: the insert trigger credits each event). */
const FILLED_BY_TRIGGERS: Record<string, string[]> = { events: ["send_id", "send_at", "send_mailbox_id"] };

/** Columns the target's triggers number as the rows go in, set back to the source's once everything is in (spintax's record numbers). */
const RESTORED: Record<string, string[]> = { campaign_leads: ["spintax_modulo_index"], campaigns: ["spintax_records"] };

export interface SchemaTable {
  name: string;
  sql: string;
  columns: { name: string; type: string; pk: number; notnull: number }[];
  fks: { from: string; table: string; to: string }[];
}

export interface CopiedTable {
  name: string;
  /** The columns inserted (all but the generated ones). */
  columns: string[];
  filled: string[];
  restored: string[];
  /** The paging key: the rowid when it is the primary key, else the primary key's columns. */
  key: string[];
  /** A WHERE clause (alias `t`, account id as ?1) that holds for the account's rows. */
  belongs: string;
  /** The account of a row, as a trigger sees it (`ref` is NEW or OLD). */
  owner: (ref: string) => string;
  /** Per write, the condition (SQL over NEW and OLD) under which the fence lets it through. */
  passes: Partial<Record<"INSERT" | "UPDATE" | "DELETE", string>>;
  /** Copied once the writes the fence lets through have landed (see FENCE_PASSES). */
  late: boolean;
}

export interface DerivedTable {
  name: string;
  columns: string[];
  /** A WHERE clause (alias `t`, account id as ?1) for the account's live rows. */
  belongs: string;
  /** The column that ties a row to the account's rows, and the table that column's ids are of (null: it is the account's id). */
  column: string;
  parent: "campaigns" | "clients" | null;
}

export interface MovePlan {
  /** Parents before children. */
  copied: CopiedTable[];
  derived: DerivedTable[];
}

export class UnclassifiedTableError extends Error {
  constructor(name: string) {
    super(`Table ${name} is neither an account's, a child of one, derived nor shared: say which in src/moves/tables.ts`);
  }
}

function quote(name: string): string {
  return `"${name.replaceAll('"', '""')}"`;
}

/** The move's plan for a shard's schema (the rows of sqlite_master with their columns and foreign keys). */
export function planMove(schema: SchemaTable[]): MovePlan {
  const byName = new Map(schema.map((table) => [table.name, table]));
  const virtual = schema.filter((table) => /^CREATE VIRTUAL TABLE/i.test(table.sql)).map((table) => table.name);
  const skipped = (name: string) =>
    SHARED.has(name) || name in DERIVED || /^(sqlite_|_cf_|d1_)/.test(name) || virtual.some((v) => name === v || name.startsWith(`${v}_`));
  const hasAccount = (table: SchemaTable) => table.name === "accounts" || table.columns.some((column) => column.name === "account_id");

  /** The foreign keys through which a child's rows belong to an account (never a table's own). */
  const ownerKeys = (table: SchemaTable): SchemaTable["fks"] => table.fks.filter((fk) => fk.table !== table.name && byName.has(fk.table) && reaches(byName.get(fk.table)!, new Set()));
  function reaches(table: SchemaTable, seen: Set<string>): boolean {
    if (hasAccount(table)) return true;
    if (seen.has(table.name)) return false;
    seen.add(table.name);
    return table.fks.some((fk) => fk.table !== table.name && byName.has(fk.table) && reaches(byName.get(fk.table)!, seen));
  }

  let alias = 0;
  function belongs(table: SchemaTable, as: string): string {
    if (table.name === "accounts") return `${as}.id = ?1`;
    if (hasAccount(table)) return `${as}.account_id = ?1`;
    return ownerKeys(table)
      .map((fk) => {
        const parent = byName.get(fk.table)!;
        const inner = `p${(alias += 1)}`;
        return `${as}.${quote(fk.from)} IN (SELECT ${inner}.${quote(fk.to)} FROM ${quote(parent.name)} ${inner} WHERE ${belongs(parent, inner)})`;
      })
      .join(" AND ");
  }
  function owner(table: SchemaTable, ref: string): string {
    if (table.name === "accounts") return `${ref}.id`;
    if (hasAccount(table)) return `${ref}.account_id`;
    const fk = ownerKeys(table)[0]!;
    const parent = byName.get(fk.table)!;
    const inner = `o${(alias += 1)}`;
    return `(SELECT ${owner(parent, inner)} FROM ${quote(parent.name)} ${inner} WHERE ${inner}.${quote(fk.to)} = ${ref}.${quote(fk.from)})`;
  }

  const copiedTables = schema.filter((table) => !skipped(table.name));
  for (const table of copiedTables) {
    if (!hasAccount(table) && ownerKeys(table).length === 0) throw new UnclassifiedTableError(table.name);
  }

  // Parents first: a foreign key is checked as each row goes in.
  const ordered: SchemaTable[] = [];
  const placed = new Set<string>();
  const place = (table: SchemaTable) => {
    if (placed.has(table.name)) return;
    placed.add(table.name);
    for (const fk of table.fks) {
      const parent = byName.get(fk.table);
      if (parent && parent.name !== table.name && !skipped(parent.name)) place(parent);
    }
    ordered.push(table);
  };
  copiedTables.forEach(place);

  return {
    copied: ordered.map((table) => {
      // Ids are kept, so a table whose primary key is its rowid pages by it; any other rowid is the
      // target's own (another account's rows may hold the source's), so such a table pages by its
      // primary key, as a WITHOUT ROWID table does.
      const primary = table.columns.filter((c) => c.pk > 0).sort((a, b) => a.pk - b.pk);
      const rowidKey = !/WITHOUT\s+ROWID/i.test(table.sql) && primary.length === 1 && primary[0]!.type.toUpperCase() === "INTEGER";
      const key = rowidKey ? ["rowid"] : primary.map((c) => c.name);
      return {
        name: table.name,
        columns: table.columns.map((c) => c.name),
        filled: FILLED_BY_TRIGGERS[table.name] ?? [],
        restored: RESTORED[table.name] ?? [],
        key,
        belongs: belongs(table, "t"),
        owner: (ref: string) => owner(table, ref),
        passes: FENCE_PASSES[table.name] ?? {},
        late: table.name in FENCE_PASSES,
      };
    })
      // The late tables after the rest (they are leaves: nothing else refers to their rows but each other, in order).
      .sort((x, y) => Number(x.late) - Number(y.late)),
    derived: Object.entries(DERIVED)
      .filter(([name]) => byName.has(name))
      .map(([name, derived]) => ({
        name,
        columns: byName.get(name)!.columns.map((c) => c.name),
        belongs: `(${derived.live}) AND ${derived.parent === null ? `t.${derived.column} = ?1` : `t.${derived.column} IN (SELECT id FROM ${derived.parent} WHERE account_id = ?1)`}`,
        column: derived.column,
        parent: derived.parent,
      })),
  };
}

/** The tables as planMove reads them (D1 lets a pragma function take a literal name only: one query per table follows). */
export const TABLES_QUERY =
  "SELECT name, coalesce(sql, '') AS sql FROM sqlite_master WHERE type = 'table' AND substr(name, 1, 7) <> 'sqlite_' AND substr(name, 1, 4) <> '_cf_' ORDER BY name";

/** A table's columns, and its foreign keys (D1 lets a pragma function take a literal name only, and allows the foreign keys' pragma as a statement only). */
export function tableShapeQueries(name: string): [columns: string, foreignKeys: string] {
  const literal = `'${name.replaceAll("'", "''")}'`;
  return [`SELECT name, type, pk, "notnull" FROM pragma_table_info(${literal})`, `PRAGMA foreign_key_list(${literal})`];
}

export { quote };
