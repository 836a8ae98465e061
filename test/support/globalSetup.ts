import { PgClient } from "@effect/sql-pg"
import { Effect, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../src/db/Database.ts"

/**
 * With DATABASE_URL set, the suites share one real PostgreSQL database: start it from an empty
 * schema and migrate it once, before the test files (which each use their own merchants) run.
 */
export default async function setup() {
  const url = process.env.DATABASE_URL
  if (url === undefined || url === "") return
  await Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe("DROP SCHEMA IF EXISTS public CASCADE")
    yield* sql.unsafe("CREATE SCHEMA public")
    yield* runMigrations
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.runPromise)
}
