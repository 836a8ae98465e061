import { PGlite } from "@electric-sql/pglite"
import { PGLiteSocketServer } from "@electric-sql/pglite-socket"
import { PgClient } from "@effect/sql-pg"
import { Duration, Effect, Layer, Redacted, String as Str } from "effect"
import { Migrator, SqlClient } from "effect/sql"
import { mkdirSync } from "node:fs"
import { AppConfig } from "../config/AppConfig.ts"
import { holdDataDir } from "./DataDirLock.ts"
import { refuseNewerSchema } from "./SchemaVersion.ts"
import migration0001 from "./migrations/0001_core_tables.ts"
import migration0002 from "./migrations/0002_sessions_and_secrets.ts"
import migration0003 from "./migrations/0003_rate_limits.ts"
import migration0004 from "./migrations/0004_bitcoin_address_pool.ts"
import migration0005 from "./migrations/0005_webhooks.ts"
import migration0006 from "./migrations/0006_chain_observation.ts"
import migration0007 from "./migrations/0007_forwarder_sweeps.ts"
import migration0008 from "./migrations/0008_mempool_evidence.ts"
import migration0009 from "./migrations/0009_solana_watcher.ts"
import migration0012 from "./migrations/0012_outbox_notify.ts"
import migration0013 from "./migrations/0013_attempt_url.ts"
import migration0014 from "./migrations/0014_idempotency_lease.ts"
import migration0015 from "./migrations/0015_reorg_settlement.ts"
import migration0016 from "./migrations/0016_quote_sources.ts"
import migration0017 from "./migrations/0017_chain_endpoints.ts"
import migration0018 from "./migrations/0018_refunds.ts"
import migration0019 from "./migrations/0019_invoice_change_notify.ts"
import migration0020 from "./migrations/0020_refund_address_note.ts"
import migration0021 from "./migrations/0021_refund_requests_side_by_side.ts"
import migration0022 from "./migrations/0022_uncorroborated_transfers.ts"
import migration0023 from "./migrations/0023_derivation_issued.ts"
import migration0024 from "./migrations/0024_embed_origins.ts"
import migration0025 from "./migrations/0025_test_mode.ts"
import migration0026 from "./migrations/0026_webhooks_per_mode.ts"
import migration0027 from "./migrations/0027_checkout_settings_per_mode.ts"

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
const embeddedServer = (dataDir: string, sharedBuffers: string) =>
  Effect.acquireRelease(
    Effect.promise(async () => {
      if (!dataDir.startsWith("memory://")) mkdirSync(dataDir, { recursive: true })
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

/** The embedded server on a directory this process holds (DataDirLock.ts): refused while another live process does. */
export const heldEmbeddedServer = (dataDir: string, sharedBuffers: string) =>
  Effect.andThen(
    dataDir.startsWith("memory://") ? Effect.void : Effect.orDie(Effect.andThen(Effect.sync(() => mkdirSync(dataDir, { recursive: true })), holdDataDir(dataDir))),
    embeddedServer(dataDir, sharedBuffers)
  )

const embeddedClient = (dataDir: string, sharedBuffers: string) =>
  Layer.unwrap(
    Effect.map(heldEmbeddedServer(dataDir, sharedBuffers),
      ({ host, port }) => PgClient.layer({ host, port, database: "postgres", username: "postgres", maxConnections: 1, ...naming }))
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

export const migrations = Migrator.fromRecord({
  "0001_core_tables": migration0001,
  "0002_sessions_and_secrets": migration0002,
  "0003_rate_limits": migration0003,
  "0004_bitcoin_address_pool": migration0004,
  "0005_webhooks": migration0005,
  "0006_chain_observation": migration0006,
  "0007_forwarder_sweeps": migration0007,
  "0008_mempool_evidence": migration0008,
  "0009_solana_watcher": migration0009,
  "0012_outbox_notify": migration0012,
  // 0010 and 0011 were never used; ids only grow (the migrator runs ids above the last applied).
  "0013_attempt_url": migration0013,
  "0014_idempotency_lease": migration0014,
  "0015_reorg_settlement": migration0015,
  "0016_quote_sources": migration0016,
  "0017_chain_endpoints": migration0017,
  "0018_refunds": migration0018,
  "0019_invoice_change_notify": migration0019,
  "0020_refund_address_note": migration0020,
  "0021_refund_requests_side_by_side": migration0021,
  "0022_uncorroborated_transfers": migration0022,
  "0023_derivation_issued": migration0023,
  "0024_embed_origins": migration0024,
  "0025_test_mode": migration0025,
  "0026_webhooks_per_mode": migration0026,
  "0027_checkout_settings_per_mode": migration0027
})

export const runMigrations = Migrator.make({})({ loader: migrations })

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
  Layer.effectDiscard(SqlClient.SqlClient.pipe(Effect.flatMap((sql) => refuseNewerSchema(sql, migrations)), Effect.andThen(runMigrations), Effect.orDie)),
  DatabaseClient
)

export type { SqlClient }
