import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted, String as Str } from "effect"
import { SqlClient } from "effect/sql"
import { mkdirSync } from "node:fs"
import { AppConfig } from "../config/AppConfig.ts"
import { holdDataDir } from "./DataDirLock.ts"
import { runMigrations } from "./Migrations.ts"
import { refuseNewerSchema } from "./SchemaVersion.ts"

export { migrations, runMigrations } from "./Migrations.ts"

/**
 * Each name mapped once: the client maps every column name of every statement it compiles and of
 * every row it returns (a create's insert alone names about 125 columns), and the names are the
 * code's own, a few hundred in all.
 */
const memoized = (map: (name: string) => string) => {
  const known = new Map<string, string>()
  return (name: string) => {
    let mapped = known.get(name)
    if (mapped === undefined) {
      mapped = map(name)
      if (known.size < 10_000) known.set(name, mapped)
    }
    return mapped
  }
}

/** Column names are mapped; JSON values (merchant metadata) are never touched. */
const naming = { transformQueryNames: memoized(Str.camelToSnake), transformResultNames: memoized(Str.snakeToCamel), transformJson: false }

/**
 * The embedded PostgreSQL: PGlite served over the PostgreSQL wire protocol on a loopback port,
 * so that the same pg client (and SQL dialect) serves both databases. The pool holds one
 * connection (PGlite is one backend session); the socket accepts a second so that a reconnect
 * is not refused while the closed socket's slot is still being freed.
 */
export const embeddedServer = (dataDir: string, sharedBuffers: string) =>
  Effect.andThen(
    dataDir.startsWith("memory://") ? Effect.void : Effect.orDie(Effect.andThen(Effect.sync(() => mkdirSync(dataDir, { recursive: true })), holdDataDir(dataDir))),
    Effect.acquireRelease(
      Effect.promise(async () => {
        // PostgreSQL's default 128 MB of shared buffers live in PGlite's WASM memory; the service's
        // working set is far smaller (scripts/bench/footprint.ts: warm RSS 312 MB at 128 MB, 202 MB at 32 MB).
        const db = await PGlite.create(dataDir, { postgresqlconf: [`shared_buffers=${sharedBuffers}`] })
        const server = new PGLiteSocketServer({ db, host: "127.0.0.1", port: 0, maxConnections: 2 })
        await server.start()
        const [host, port] = server.getServerConn().split(":")
        return { db, server, host, port: Number(port) }
      }),
      ({ db, server }) =>
        Effect.promise(async () => {
          await server.stop()
          await db.close()
        })
    )
  )

const embeddedClient = (dataDir: string, sharedBuffers: string) =>
  Layer.unwrap(
    Effect.map(embeddedServer(dataDir, sharedBuffers), ({ host, port }) => PgClient.layer({ host, port, database: "postgres", username: "postgres", maxConnections: 1, ...naming }))
  )

/**
 * With `multiplex`, statements outside transactions from concurrent requests share the pooled
 * connections and go out pipelined, many in one write: under load a create's six statements no
 * longer cost six socket writes and six backend wake-ups each. Transactions still reserve a
 * connection of their own. Only for a PostgreSQL server: PGlite has a single connection anyway.
 */
const serverClient = (url: string, multiplex: boolean, timeouts: { readonly connectMs: number; readonly statementMs: number }) =>
  PgClient.layer({
    url: Redacted.make(url),
    maxConnections: 10,
    multiplex,
    connectTimeout: Duration.millis(timeouts.connectMs),
    // TCP keep-alive notices a silently dead server on idle connections; statement_timeout bounds a query.
    keepAlive: Duration.seconds(10),
    startupParameters: { statement_timeout: String(timeouts.statementMs) },
    ...naming
  })

/** The SqlClient for DATABASE_URL when set, else the embedded PGlite, as it is: not migrated. */
export const DatabaseClient = Layer.unwrap(
  Effect.map(AppConfig, (config) =>
    config.databaseUrl !== undefined
      ? serverClient(config.databaseUrl, config.databaseMultiplex, {
        connectMs: config.databaseConnectTimeoutMs,
        statementMs: config.databaseStatementTimeoutMs
      })
      : embeddedClient(config.dataDir, config.embeddedSharedBuffers))
)

/** SqlClient for DATABASE_URL when set, else the embedded PGlite; migrated before use. */
export const DatabaseLive = Layer.provideMerge(
  // A database migrated by a newer version is refused before anything runs on it: its schema is not ours.
  Layer.effectDiscard(SqlClient.SqlClient.pipe(Effect.flatMap(refuseNewerSchema), Effect.andThen(runMigrations), Effect.orDie)),
  DatabaseClient
)

export type { SqlClient }
