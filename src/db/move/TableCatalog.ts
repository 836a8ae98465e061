import { Effect } from "effect"
import type { SqlClient } from "effect/sql"

/** A table of the service's schema as the move copies it. */
export interface CatalogTable {
  readonly name: string
  /** Its primary key columns, in key order: the copy reads the rows in this order. */
  readonly key: ReadonlyArray<string>
}

/** The migrator's own bookkeeping: the target's copy comes from running the migrations there. */
const MIGRATIONS_TABLE = "effect_sql_migrations"

export const quoteIdent = (name: string): string => `"${name.replaceAll("\"", "\"\"")}"`

/**
 * Tables in an order where every table comes after the tables its foreign keys point to, so that
 * rows can be inserted in that order with the constraints checked as they go. Pure.
 */
export const dependencyOrder = (tables: ReadonlyArray<string>, references: ReadonlyArray<{ readonly from: string; readonly to: string }>) => {
  const ordered: Array<string> = []
  const visiting = new Set<string>()
  const visit = (table: string) => {
    if (ordered.includes(table) || visiting.has(table)) return
    visiting.add(table)
    for (const reference of references) if (reference.from === table && reference.to !== table) visit(reference.to)
    ordered.push(table)
  }
  for (const table of [...tables].sort()) visit(table)
  return ordered.filter((table) => tables.includes(table))
}

/** The service's tables in the public schema (not the migrations table), parents before children. */
export const catalogTables = (sql: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const tables = yield* sql.unsafe<{ readonly name: string; readonly key: string | null }>(
      `SELECT c.relname AS name,
        (SELECT string_agg(a.attname, ',' ORDER BY k.ordinality)
          FROM pg_index i CROSS JOIN LATERAL unnest(i.indkey) WITH ORDINALITY AS k(attnum, ordinality)
          JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.attnum
          WHERE i.indrelid = c.oid AND i.indisprimary) AS key
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p') AND c.relname <> '${MIGRATIONS_TABLE}'`
    ).withoutTransform
    const references = yield* sql.unsafe<{ readonly from: string; readonly to: string }>(
      `SELECT conrelid::regclass::text AS "from", confrelid::regclass::text AS "to" FROM pg_constraint
      WHERE contype = 'f' AND connamespace = 'public'::regnamespace`
    ).withoutTransform
    const keys = new Map(tables.map((table) => [table.name, table.key === null ? [] : table.key.split(",")]))
    return dependencyOrder(tables.map((table) => table.name), references).map((name): CatalogTable => ({ name, key: keys.get(name) ?? [] }))
  })

/** A sequence's state: the value it last gave out (null when it never did) and whether it did. */
export interface SequenceState {
  readonly name: string
  readonly lastValue: string | null
}

export const sequenceStates = (sql: SqlClient.SqlClient) =>
  sql.unsafe<SequenceState>(
    `SELECT sequencename AS "name", last_value::text AS "lastValue" FROM pg_sequences WHERE schemaname = 'public' ORDER BY sequencename`
  ).withoutTransform
