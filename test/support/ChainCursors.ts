import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import type { TestApp } from "./TestApp.ts"

export interface CursorRow {
  readonly network: string
  readonly processedHeight: string
  readonly chainTime: Date
  readonly headHeight: string
  readonly headTime: Date
  readonly lastError: string | null
}

/**
 * Runs `use` with an `upsert` of chain_cursors rows, then puts back the rows of the networks it
 * upserted, and of `alsoRestore`, as they were (the table is global: on a shared PostgreSQL
 * database other suites' watchers use it).
 */
export const withCursorRows = async (
  app: TestApp,
  use: (upsert: (row: CursorRow) => Promise<void>) => Promise<void>,
  alsoRestore: ReadonlyArray<string> = []
) => {
  const saved = new Map<string, ReadonlyArray<Record<string, unknown>>>()
  const save = (network: string) =>
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      if (!saved.has(network)) saved.set(network, yield* sql<Record<string, unknown>>`SELECT * FROM chain_cursors WHERE network = ${network}`)
    })
  await app.run(Effect.forEach(alsoRestore, save))
  const upsert = (row: CursorRow) =>
    app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      yield* save(row.network)
      yield* sql`INSERT INTO chain_cursors (network, processed_height, processed_hash, chain_time, head_height, head_time, last_error, last_error_at, updated_at)
        VALUES (${row.network}, ${row.processedHeight}, ${"0x" + "ab".repeat(32)}, ${row.chainTime}, ${row.headHeight}, ${row.headTime}, ${row.lastError},
          ${row.lastError === null ? null : row.headTime}, now())
        ON CONFLICT (network) DO UPDATE SET processed_height = EXCLUDED.processed_height, processed_hash = EXCLUDED.processed_hash,
          chain_time = EXCLUDED.chain_time, head_height = EXCLUDED.head_height, head_time = EXCLUDED.head_time,
          last_error = EXCLUDED.last_error, last_error_at = EXCLUDED.last_error_at, updated_at = now()`
    }))
  try {
    await use(upsert)
  } finally {
    await app.run(Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      for (const [network, rows] of saved) {
        yield* sql`DELETE FROM chain_cursors WHERE network = ${network}`
        for (const row of rows) yield* sql`INSERT INTO chain_cursors ${sql.insert(row)}`
      }
    }))
  }
}
