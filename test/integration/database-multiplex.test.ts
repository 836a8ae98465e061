import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp } from "../support/TestApp.ts"

// Multiplexing pipelines statements on a PostgreSQL server's shared connections; PGlite has one
// unshared connection, so there is nothing to check there.
const server = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
if (!server) console.log("database-multiplex: skipped, it needs a PostgreSQL server (DATABASE_URL)")

let app: TestApp

beforeAll(async () => {
  if (server) app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

describe.skipIf(!server)("statements pipelined on shared connections", () => {
  it("each get their own answer, and a failing one fails only itself", async () => {
    const results = await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.forEach(
        Array.from({ length: 300 }, (_, index) => index),
        (index) =>
          Effect.result(
            index % 7 === 3
              ? sql<{ n: number }>`SELECT (1 / (${index}::int - ${index}::int)) AS n`
              : sql<{ n: number }>`SELECT ${index}::int AS n, pg_backend_pid() AS pid`
          ),
        { concurrency: "unbounded" }
      )))
    results.forEach((result, index) => {
      if (index % 7 === 3) {
        expect(result._tag).toBe("Failure")
      } else {
        expect(result._tag).toBe("Success")
        if (result._tag === "Success") expect(result.success[0].n).toBe(index)
      }
    })
  })

  it("leave a transaction running beside them on a connection of its own", async () => {
    const { inside, outside } = await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
      Effect.all({
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
      }, { concurrency: "unbounded" })))
    expect(inside[0]).toBe(inside[1])
    // Statements outside the transaction run in autocommit: none of them runs inside it.
    expect(outside.map((rows) => rows[0].txid).filter((txid) => txid !== null)).toEqual([])
  })
})
