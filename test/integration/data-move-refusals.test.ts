import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import { afterAll, describe, expect, it } from "vitest"
import { moveData } from "../../src/db/move/DataMove.ts"
import { dataMoveSetup } from "../support/DataMoveSetup.ts"
import { startTestApp } from "../support/TestApp.ts"

// Issue #56: the move refuses, changing nothing, a target that is not empty and schema versions
// that differ; `npm run cli -- migrate` migrates without starting the service; a service refuses
// a database migrated by a newer version.

const server = process.env.DATABASE_URL !== undefined && process.env.DATABASE_URL !== ""
if (!server) console.log("data-move-refusals: skipped, the move's target is a PostgreSQL server (DATABASE_URL)")

const { cleanUp, cli, dataDir, newDatabase, query } = dataMoveSetup("checkout-move-refusals-")
afterAll(cleanUp)

const refusalOf = (url: string) => Effect.runPromise(Effect.flip(moveData(dataDir, url))).then((error) => error.message)
const FUTURE = "INSERT INTO effect_sql_migrations (migration_id, name) VALUES (9999, 'from_the_future')"

describe.skipIf(!server)("data move refusals and migrate", () => {
  it("migrate applies the migrations without starting the service, once", async () => {
    expect((await cli({}, "migrate")).stdout).toMatch(/^applied 0001_core_tables, .*; the schema is at \d{4}_\w+$/m)
    expect((await cli({}, "migrate")).stdout).toMatch(/up to date; no migration to apply/)
    const target = await newDatabase()
    expect((await cli({ DATABASE_URL: target }, "migrate")).stdout).toMatch(/^applied 0001_core_tables/m)
    expect(await query(target, "SELECT count(*)::int AS n FROM merchants")).toEqual([{ n: 0 }])
  }, 120_000)

  it("refuses a target that is not empty, changing nothing", async () => {
    const target = await newDatabase()
    await query(target, "CREATE TABLE notes (body text)")
    await query(target, "INSERT INTO notes VALUES ('keep me')")
    expect(await refusalOf(target)).toBe("data move refused: the target is not empty (notes: 1 rows); nothing was changed")
    expect(await query(target, "SELECT tablename FROM pg_tables WHERE schemaname = 'public'")).toEqual([{ tablename: "notes" }])
  }, 120_000)

  it("refuses schema versions that differ: a target or a source migrated by a newer version", async () => {
    const target = await newDatabase()
    await cli({ DATABASE_URL: target }, "migrate")
    await query(target, FUTURE)
    expect(await refusalOf(target)).toMatch(/^data move refused: the schema versions differ: the target is at 9999_from_the_future, newer than \d{4}_\w+; nothing was changed$/)
    // A service refuses to start on it, and so does migrate.
    await expect(startTestApp({ databaseUrl: target })).rejects.toThrow(/migrated by a newer version of the service \(migration 9999_from_the_future/)
    await expect(cli({ DATABASE_URL: target }, "migrate")).rejects.toMatchObject({ stderr: expect.stringMatching(/migrated by a newer version/) })

    const db = await PGlite.create(dataDir)
    await db.exec(FUTURE)
    await db.close()
    const empty = await newDatabase()
    expect(await refusalOf(empty)).toMatch(/^data move refused: the schema versions differ: the embedded database is at 9999_from_the_future/)
    expect(await query(empty, "SELECT count(*)::int AS n FROM pg_tables WHERE schemaname = 'public'")).toEqual([{ n: 0 }])
  }, 120_000)
})
