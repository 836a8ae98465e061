import { Effect } from "effect"
import type { SqlClient } from "effect/sql"
import { type CatalogTable, quoteIdent } from "./TableCatalog.ts"

/** Rows per statement: one JSON text of a few hundred rows at most, well inside a parameter's limit. */
const BATCH = 500

/**
 * The session settings that fix how values are written as text, set on both sides before a copy
 * or a checksum: timestamps in UTC and ISO style, floats in their shortest exact form, bytea in hex.
 */
export const canonicalText = (sql: SqlClient.SqlClient) =>
  Effect.forEach(
    ["TimeZone = 'UTC'", "DateStyle = 'ISO, YMD'", "IntervalStyle = 'postgres'", "extra_float_digits = 1", "bytea_output = 'hex'"],
    (setting) => sql.unsafe(`SET LOCAL ${setting}`).withoutTransform,
    { discard: true }
  )

/**
 * Copies a table's rows: read from the source as JSON (`json_agg`, every value in its exact text
 * form: bigint and numeric digits, timestamps with microseconds and offset, jsonb as is), written
 * on the target by `json_populate_recordset` into the same columns. Returns the rows copied.
 */
export const copyTable = (source: SqlClient.SqlClient, target: SqlClient.SqlClient, table: CatalogTable) =>
  Effect.gen(function*() {
    const name = quoteIdent(table.name)
    const order = table.key.length === 0 ? "" : `ORDER BY ${table.key.map(quoteIdent).join(", ")}`
    let copied = 0
    while (true) {
      const [batch] = yield* source.unsafe<{ readonly rows: string; readonly count: number }>(
        `SELECT coalesce(json_agg(t), '[]')::text AS rows, count(*)::int AS count FROM (SELECT * FROM ${name} ${order} LIMIT ${BATCH} OFFSET ${copied}) t`
      ).withoutTransform
      const count = Number(batch?.count ?? 0)
      if (batch === undefined || count === 0) return copied
      yield* target.unsafe(`INSERT INTO ${name} SELECT * FROM json_populate_recordset(NULL::${name}, $1::json)`, [batch.rows]).withoutTransform
      copied += count
      if (count < BATCH) return copied
    }
  })

/** A table's rows as both sides compute them: the count, and an md5 of every row's md5 in a collation-free order. */
export interface TableSum {
  readonly rows: number
  readonly checksum: string
}

export const tableSum = (sql: SqlClient.SqlClient, table: string) =>
  Effect.map(
    sql.unsafe<{ readonly rows: string; readonly checksum: string }>(
      `SELECT count(*)::text AS rows, coalesce(md5(string_agg(h, '' ORDER BY h COLLATE "C")), md5('')) AS checksum
      FROM (SELECT md5(t::text) AS h FROM ${quoteIdent(table)} t) hashed`
    ).withoutTransform,
    ([sum]): TableSum => ({ rows: Number(sum?.rows ?? 0), checksum: sum?.checksum ?? "" })
  )

/** The tables that hold rows, with their counts: a database to move into must have none. */
export const occupiedTables = (sql: SqlClient.SqlClient, tables: ReadonlyArray<CatalogTable>) =>
  Effect.map(
    Effect.forEach(tables, (table) =>
      Effect.map(sql.unsafe<{ readonly rows: string }>(`SELECT count(*)::text AS rows FROM ${quoteIdent(table.name)}`).withoutTransform,
        ([row]) => ({ name: table.name, rows: Number(row?.rows ?? 0) }))),
    (counts) => counts.filter((count) => count.rows > 0)
  )
