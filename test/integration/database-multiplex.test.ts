import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { suiteOptions } from "../support/TestApp.ts"
import { testDatabase } from "../support/TestLayers.ts"

// Multiplexing pipelines statements on a PostgreSQL server's shared connections; PGlite has one
// unshared connection, so there is nothing to check there.
const server = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
if (!server) console.log("database-multiplex: skipped, it needs a PostgreSQL server (DATABASE_URL)")

describe.skipIf(!server)("statements pipelined on shared connections", () => {
  it.layer(testDatabase(), suiteOptions)((it) => {
    it.effect("each get their own answer, and a failing one fails only itself", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const results = yield* Effect.forEach(
          Array.from({ length: 300 }, (_, index) => index),
          (index) =>
            Effect.result(
              index % 7 === 3
                ? sql<{ n: number }>`SELECT (1 / (${index}::int - ${index}::int)) AS n`
                : sql<{ n: number }>`SELECT ${index}::int AS n, pg_backend_pid() AS pid`
            ),
          { concurrency: "unbounded" }
        )
        results.forEach((result, index) => {
          if (index % 7 === 3) {
            expect(result._tag).toBe("Failure")
          } else {
            expect(result._tag).toBe("Success")
            if (result._tag === "Success") expect(result.success[0].n).toBe(index)
          }
        })
      }))

    it.effect("leave a transaction running beside them on a connection of its own", () =>
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const { inside, outside } = yield* Effect.all({
          inside: sql.withTransaction(Effect.gen(function*() {
            const first = yield* sql<{ txid: string }>`SELECT txid_current()::text AS txid`
            yield* Effect.sleep("20 millis")
            const second = yield* sql<{ txid: string }>`SELECT txid_current()::text AS txid`
            return [first[0].txid, second[0].txid]
          })),
          outside: Effect.forEach(
            Array.from({ length: 50 }, (_, index) => index),
            () => sql<{ txid: string | null }>`SELECT pg_current_xact_id_if_assigned()::text AS txid`,
            { concurrency: "unbounded" }
          )
        }, { concurrency: "unbounded" })
        expect(inside[0]).toBe(inside[1])
        // Statements outside the transaction run in autocommit: none of them runs inside it.
        expect(outside.map((rows) => rows[0].txid).filter((txid) => txid !== null)).toEqual([])
      }))
  })
})
