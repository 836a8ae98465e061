import { PgClient } from "@effect/sql-pg"
import { existsSync, mkdtempSync, readdirSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { basename, dirname, join } from "node:path"
import { Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { runMigrations } from "../../src/db/Database.ts"
import { PGLITE_TEMPLATE_VARIABLE, testDatabase } from "./TestLayers.ts"

/**
 * Without DATABASE_URL: one PGlite data directory, initialised and migrated once for the run, that
 * the suites' embedded databases start from as copies (TestLayers' `testConfigLayer`). The workers
 * start after this and inherit the variable naming it. Returns the teardown that removes it.
 */
const embeddedTemplate = async () => {
  // In memory (tmpfs) where there is one: each app copies 40 MB, which a loaded VM disk wrote in 1 s.
  const template = mkdtempSync(join(existsSync("/dev/shm") ? "/dev/shm" : tmpdir(), "checkout-pglite-"))
  await Effect.runPromise(Effect.scoped(Layer.build(testDatabase({ dataDir: template }))))
  process.env[PGLITE_TEMPLATE_VARIABLE] = template
  return () => {
    const parent = dirname(template)
    for (const name of readdirSync(parent)) {
      if (name.startsWith(basename(template))) rmSync(join(parent, name), { recursive: true, force: true })
    }
  }
}

/**
 * With DATABASE_URL set, the suites share one real PostgreSQL database: start it from an empty
 * schema and migrate it once, before the test files (which each use their own merchants) run.
 */
export default async function setup() {
  // The suites' own skip messages are quiet with their logs (silent: "passed-only"); say it once here.
  const skipped = [
    process.env.DATABASE_URL ? undefined : "DATABASE_URL is unset: the suites that need a PostgreSQL server skip (the rest run on the embedded PGlite)",
    process.env.REDIS_URL ? undefined : "REDIS_URL is unset: the suites that need Redis skip",
    existsSync(process.env.CHROMIUM_PATH ?? "/usr/bin/chromium") ? undefined : "no /usr/bin/chromium: the browser suites skip (apt-get install -y chromium)"
  ].filter((line) => line !== undefined)
  for (const line of skipped) console.log(`note: ${line}`)
  const url = process.env.DATABASE_URL
  if (url === undefined || url === "") return embeddedTemplate()
  await Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    yield* sql.unsafe("DROP SCHEMA IF EXISTS public CASCADE")
    yield* sql.unsafe("CREATE SCHEMA public")
    yield* runMigrations
  }).pipe(Effect.provide(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 })), Effect.runPromise)
}
