/**
 * The database commands of the operator CLI:
 *
 *   npm run cli -- data move --to <postgres-url>   (the embedded database in CHECKOUT_DATA_DIR, or ./data, into an empty PostgreSQL database; the service stopped)
 *   npm run cli -- migrate                         (applies the migrations to DATABASE_URL, or the embedded database, without starting the service)
 */
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { DatabaseClient, migrations, runMigrations } from "../../src/db/Database.ts"
import { moveData, type MoveReport } from "../../src/db/move/DataMove.ts"
import { describeVersion, refuseNewerSchema } from "../../src/db/SchemaVersion.ts"

const printReport = (report: MoveReport) => {
  const width = Math.max(...report.tables.map((table) => table.name.length))
  for (const table of report.tables) console.log(`${table.name.padEnd(width)}  ${String(table.rows).padStart(8)} rows  md5 ${table.checksum}  identical`)
  const rows = report.tables.reduce((total, table) => total + table.rows, 0)
  console.log(
    `total: ${report.tables.length} tables, ${rows} rows, ${report.sequences} sequences moved at schema ${
      describeVersion(report.version)
    }; every table's count and checksum read back identical from both sides`
  )
}

const move = (args: ReadonlyArray<string>) => {
  const to = args.indexOf("--to")
  const url = to === -1 ? undefined : args[to + 1]
  if (url === undefined || !/^postgres(ql)?:\/\//.test(url)) return Effect.fail("usage: npm run cli -- data move --to postgres://user@host:5432/database")
  return Effect.map(moveData(parseConfig({ ...process.env, DATABASE_URL: undefined }).dataDir, url), printReport)
}

const migrate = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  yield* refuseNewerSchema(sql, migrations)
  const applied = yield* runMigrations
  const now = describeVersion(applied.at(-1) === undefined ? undefined : { id: applied.at(-1)![0], name: applied.at(-1)![1] })
  console.log(
    applied.length === 0
      ? "the database's schema is up to date; no migration to apply"
      : `applied ${applied.map(([id, name]) => describeVersion({ id, name })).join(", ")}; the schema is at ${now}`
  )
}).pipe(Effect.provide(DatabaseClient.pipe(Layer.provide(Layer.succeed(AppConfig, parseConfig(process.env))))))

/** Runs `data move …` or `migrate`; resolves with the process's exit code. */
export const runDatabaseCommand = (args: ReadonlyArray<string>): Promise<number> => {
  const command: Effect.Effect<void, unknown> = args[0] === "migrate" ? migrate : move(args.slice(2))
  return Effect.runPromise(command).then(
    () => 0,
    (error: unknown) => {
      console.error(typeof error === "string" ? error : error instanceof Error ? error.message : String(error))
      return 1
    }
  )
}
