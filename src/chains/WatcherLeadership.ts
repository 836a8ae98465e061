import { Context, Effect, Exit, Layer, Schema, Scope } from "effect"
import { SqlClient, type SqlConnection } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"

const decodeLocked = Schema.decodeUnknownEffect(Schema.Tuple([Schema.Struct({ locked: Schema.Boolean })]))

/**
 * One leader per network across service instances: a PostgreSQL session advisory lock per
 * network, held on one reserved connection for as long as this process watches. When that
 * connection fails, leadership is dropped and sought again; another instance may take it over.
 * On the embedded database there is one process, which always leads (and holding a reserved
 * connection would take PGlite's only one).
 */
export class WatcherLeadership extends Context.Service<WatcherLeadership, {
  /** Whether this process leads `network` now (acquiring the lock when free). */
  readonly lead: (network: string) => Effect.Effect<boolean>
}>()("Chains/WatcherLeadership") {
  static readonly layer = Layer.effect(
    WatcherLeadership,
    Effect.gen(function*() {
      const { databaseUrl } = yield* AppConfig
      if (databaseUrl === undefined) return { lead: () => Effect.succeed(true) }
      const sql = yield* SqlClient.SqlClient
      let held: { readonly scope: Scope.Closeable; readonly connection: SqlConnection.Connection; readonly networks: Set<string> } | undefined

      // The reserved connection goes back to the pool, not away: its session's locks must be let go first.
      const release = Effect.suspend(() => {
        const current = held
        held = undefined
        return current === undefined ? Effect.void : current.connection.execute("SELECT pg_advisory_unlock_all()", [], undefined).pipe(
          Effect.ignore,
          Effect.andThen(Scope.close(current.scope, Exit.void))
        )
      })
      yield* Effect.addFinalizer(() => release)

      const connection = Effect.gen(function*() {
        if (held !== undefined) {
          const alive = yield* Effect.result(held.connection.execute("SELECT 1", [], undefined))
          if (alive._tag === "Success") return held
          yield* Effect.logWarning("Lost the chain watchers' leadership connection")
          yield* release
        }
        const scope = yield* Scope.make()
        const reserved = yield* Scope.provide(sql.reserve, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
        held = { scope, connection: reserved, networks: new Set() }
        return held
      })

      const lead = (network: string) =>
        Effect.gen(function*() {
          const current = yield* connection
          if (current.networks.has(network)) return true
          const rows = yield* current.connection.execute(
            "SELECT pg_try_advisory_lock(hashtext($1)) AS locked",
            [`checkout-chain-watcher:${network}`],
            undefined
          )
          const [{ locked }] = yield* decodeLocked(rows)
          if (locked) {
            current.networks.add(network)
            yield* Effect.logInfo("Leading the chain watcher").pipe(Effect.annotateLogs({ network }))
          }
          return locked
        }).pipe(
          Effect.catchCause((cause) => Effect.logWarning("Chain watcher leadership unavailable", cause).pipe(Effect.as(false))),
          Effect.withSpan("WatcherLeadership.lead", { attributes: { network } })
        )

      return { lead }
    })
  )
}
