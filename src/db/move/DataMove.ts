import { PgClient } from "@effect/sql-pg"
import { Context, Data, Effect, Layer, Redacted } from "effect"
import { SqlClient } from "effect/sql"
import { existsSync } from "node:fs"
import { join } from "node:path"
import { heldEmbeddedServer, migrations, runMigrations } from "../Database.ts"
import { dataDirHolder } from "../DataDirLock.ts"
import { appliedVersion, describeVersion, knownVersion, type SchemaVersion } from "../SchemaVersion.ts"
import { catalogTables, type CatalogTable, quoteIdent, sequenceStates } from "./TableCatalog.ts"
import { canonicalText, copyTable, occupiedTables, tableSum } from "./TableRows.ts"

/** The move will not start: nothing was changed on either side. */
export class MoveRefused extends Data.TaggedError("MoveRefused")<{ readonly reason: string }> {
  override get message() {
    return `data move refused: ${this.reason}; nothing was changed`
  }
}

/** A table's rows differ between the two sides after the copy: the copy was rolled back. */
export class MoveMismatch extends Data.TaggedError("MoveMismatch")<{ readonly table: string }> {
  override get message() {
    return `data move failed: ${this.table} reads back differently on the target; the copy was rolled back`
  }
}

export interface MovedTable {
  readonly name: string
  readonly rows: number
  readonly checksum: string
}

export interface MoveReport {
  readonly version: SchemaVersion
  readonly tables: ReadonlyArray<MovedTable>
  readonly sequences: number
}

/** A client of its own, with no name mapping: the move reads and writes columns by their SQL names. */
const clientOf = (layer: Layer.Layer<SqlClient.SqlClient, unknown>) => Effect.map(Layer.build(Layer.orDie(layer)), (context) => Context.get(context, SqlClient.SqlClient))

const sourceClient = (dataDir: string) =>
  Effect.gen(function*() {
    if (!existsSync(join(dataDir, "PG_VERSION"))) return yield* new MoveRefused({ reason: `there is no embedded database in ${dataDir} (CHECKOUT_DATA_DIR)` })
    const holder = dataDirHolder(dataDir)
    if (holder !== undefined) return yield* new MoveRefused({ reason: `the embedded database in ${dataDir} is in use by process ${holder} (a running service?): stop it first` })
    const { host, port } = yield* heldEmbeddedServer(dataDir, "32MB")
    return yield* clientOf(PgClient.layer({ host, port, database: "postgres", username: "postgres", maxConnections: 1 }))
  })

const targetClient = (url: string) => clientOf(PgClient.layer({ url: Redacted.make(url), maxConnections: 1 }))

/** Every check that can refuse the move, made before anything is written anywhere. */
const refusals = (source: SqlClient.SqlClient, target: SqlClient.SqlClient) =>
  Effect.gen(function*() {
    const known = yield* knownVersion(migrations)
    const sourceVersion = yield* appliedVersion(source)
    const targetVersion = yield* appliedVersion(target)
    if (sourceVersion?.id !== known.id) {
      return yield* new MoveRefused({
        reason: `the schema versions differ: the embedded database is at ${describeVersion(sourceVersion)}, this version at ${describeVersion(known)}${
          (sourceVersion?.id ?? 0) < known.id ? " (run `npm run cli -- migrate` on it first)" : " (use the version that migrated it)"
        }`
      })
    }
    if (targetVersion !== undefined && targetVersion.id > known.id) {
      return yield* new MoveRefused({ reason: `the schema versions differ: the target is at ${describeVersion(targetVersion)}, newer than ${describeVersion(known)}` })
    }
    const occupied = yield* occupiedTables(target, yield* catalogTables(target))
    if (occupied.length > 0) {
      return yield* new MoveRefused({ reason: `the target is not empty (${occupied.map((table) => `${table.name}: ${table.rows} rows`).join(", ")})` })
    }
    return known
  })

/** Copies every table and sequence inside the target's transaction and reads each table back from both sides. */
const copyAndVerify = (source: SqlClient.SqlClient, target: SqlClient.SqlClient, tables: ReadonlyArray<CatalogTable>) =>
  Effect.gen(function*() {
    yield* canonicalText(target)
    for (const table of tables) yield* copyTable(source, target, table)
    const sequences = (yield* sequenceStates(source)).filter((sequence) => sequence.lastValue !== null)
    for (const sequence of sequences) {
      yield* target.unsafe(`SELECT setval($1, $2::bigint, true)`, [`public.${quoteIdent(sequence.name)}`, sequence.lastValue]).withoutTransform
    }
    const moved: Array<MovedTable> = []
    for (const table of tables) {
      const [before, after] = [yield* tableSum(source, table.name), yield* tableSum(target, table.name)]
      if (before.rows !== after.rows || before.checksum !== after.checksum) return yield* new MoveMismatch({ table: table.name })
      moved.push({ name: table.name, ...after })
    }
    const [sourceSequences, targetSequences] = [yield* sequenceStates(source), yield* sequenceStates(target)]
    if (JSON.stringify(sourceSequences) !== JSON.stringify(targetSequences)) return yield* new MoveMismatch({ table: "sequences" })
    return { tables: moved, sequences: sequences.length }
  })

/**
 * Moves the embedded database in `dataDir` into the empty PostgreSQL database at `targetUrl`:
 * checks, migrates the target, then copies and verifies in one transaction of the target (a
 * failure leaves it migrated and empty, so the move can be run again). The source is only read.
 */
export const moveData = (dataDir: string, targetUrl: string) =>
  Effect.scoped(Effect.gen(function*() {
    const source = yield* sourceClient(dataDir)
    const target = yield* targetClient(targetUrl)
    const version = yield* refusals(source, target)
    yield* Effect.provideService(runMigrations, SqlClient.SqlClient, target)
    const tables = yield* catalogTables(source)
    const copied = yield* source.withTransaction(Effect.andThen(canonicalText(source), target.withTransaction(copyAndVerify(source, target, tables))))
    return { version, ...copied } satisfies MoveReport
  }))
