import { PGlite } from "@electric-sql/pglite"
import { Effect } from "effect"
import { mkdtempSync, readFileSync, rmSync } from "node:fs"
import { tmpdir } from "node:os"
import { join } from "node:path"
import pg from "pg"
import { afterAll, describe, expect, it } from "vitest"
import { migrations } from "../../src/db/Database.ts"
import { knownVersion } from "../../src/db/SchemaVersion.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { startTestApp } from "../support/TestApp.ts"

// Issue #56, upgrade in place: a database made by an earlier landed version (0db0f56, migrations
// 0001-0020: test/fixtures/upgrade-0020, made by make-fixture.ts with that version's code) is
// upgraded by today's code, and every invoice answers as that version answered. A database
// migrated by a newer version is refused at start.

const FIXTURE = join(import.meta.dirname, "..", "fixtures", "upgrade-0020")
const dump = readFileSync(join(FIXTURE, "database.sql"), "utf8")
const { apiKey, answers } = JSON.parse(readFileSync(join(FIXTURE, "answers.json"), "utf8")) as { apiKey: string; answers: Record<string, string> }

const dataDir = mkdtempSync(join(tmpdir(), "checkout-upgrade-"))
let dropDatabase = async () => {}
afterAll(async () => {
  await dropDatabase()
  rmSync(dataDir, { recursive: true, force: true })
})

/** Runs SQL on the suite's database: its own on the PostgreSQL server when DATABASE_URL is set, else the embedded one in dataDir. */
const onDatabase = async (url: string | undefined, text: string) => {
  if (url === undefined) {
    const db = await PGlite.create(dataDir)
    try {
      return (await db.exec(text)).at(-1)?.rows ?? []
    } finally {
      await db.close()
    }
  }
  const client = new pg.Client({ connectionString: url })
  await client.connect()
  try {
    const results = await client.query(text)
    return (Array.isArray(results) ? results.at(-1) : results).rows
  } finally {
    await client.end()
  }
}

const latestMigration = async (url: string | undefined) =>
  (await onDatabase(url, "SELECT migration_id::int AS id FROM effect_sql_migrations ORDER BY migration_id DESC LIMIT 1"))[0] as { id: number }

describe("upgrade in place", () => {
  it("upgrades a database of the 0020 version with today's migrations; every invoice answers byte for byte as before; a newer schema is refused", async () => {
    const database = await privateDatabase()
    dropDatabase = database.drop
    await onDatabase(database.url, dump)
    expect(await latestMigration(database.url)).toEqual({ id: 20 })

    const overrides = database.url === undefined ? { databaseUrl: undefined, dataDir } : { databaseUrl: database.url }
    const app = await startTestApp(overrides)
    try {
      expect(Object.keys(answers)).toHaveLength(3)
      for (const [id, before] of Object.entries(answers)) {
        const after = await fetch(`${app.baseUrl}/api/checkout/invoices/${id}`, { headers: { "x-api-key": apiKey } })
        expect(after.status).toBe(200)
        // Byte for byte, but for the fields added since: `livemode` (migration 0025), true for every invoice made before test mode.
        expect(await after.text()).toBe(before.replace(/("lastPaymentObservedAt":(?:null|"[^"]*"))/, "$1,\"livemode\":true"))
      }
    } finally {
      await app.close()
    }
    expect(await latestMigration(database.url)).toEqual({ id: (await Effect.runPromise(knownVersion(migrations))).id })

    await onDatabase(database.url, "INSERT INTO effect_sql_migrations (migration_id, name) VALUES (9999, 'from_the_future')")
    await expect(startTestApp(overrides)).rejects.toThrow(/migrated by a newer version of the service \(migration 9999_from_the_future; this version knows up to \d{4}_\w+\)/)
  }, 120_000)
})
