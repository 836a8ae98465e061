import { Cause, Context, Data, Deferred, Duration, Effect, Exit, Fiber, Layer, Option, Schedule, Schema, Scope, Semaphore } from "effect"
import { SqlClient, type SqlConnection } from "effect/sql"
import { AppConfig } from "../../config/AppConfig.ts"

const decodeLocked = Schema.decodeUnknownEffect(Schema.Tuple([Schema.Struct({ locked: Schema.Boolean })]))

/** A bound that does not wait for the bounded effect to stop: an interrupted query on a silent connection can take seconds to give up. */
class Unanswered extends Data.TaggedError("Unanswered")<{ readonly millis: number }> {}

const within = <A, E>(millis: number, effect: Effect.Effect<A, E>, afterAbandoned: Effect.Effect<void> = Effect.void): Effect.Effect<A, E | Unanswered> =>
  Effect.gen(function*() {
    const fiber = yield* Effect.forkDetach(effect)
    const exit = yield* Effect.timeoutOption(Fiber.await(fiber), Duration.millis(millis))
    if (Option.isSome(exit)) return yield* exit.value
    yield* Effect.forkDetach(Effect.andThen(Fiber.interrupt(fiber), afterAbandoned))
    return yield* new Unanswered({ millis })
  })

const unanswered = (cause: Cause.Cause<unknown>) => Cause.hasFails(cause) && Cause.squash(cause) instanceof Unanswered

/** The network's lock key, as `pg_try_advisory_lock(hashtext(...))` takes it (unchanged, so that instances of every version exclude one another). */
const lockName = (network: string) => `checkout-chain-watcher:${network}`

/**
 * Terminates the session that holds the network's lock when it has been silent for the lease: a
 * leader checks its lock connection every third of the lease, so a silent one is partitioned, its
 * host gone or its process frozen, and PostgreSQL would keep its session (and the lock) until TCP
 * notices, which a partition can put off for hours. A bigint advisory key shows in pg_locks as
 * its high half (classid) and low half (objid). Only a session of the same role can be ended.
 */
const TERMINATE_SILENT_HOLDER = `SELECT pg_terminate_backend(a.pid) AS terminated
  FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
  WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1 AND l.pid <> pg_backend_pid()
    AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
    AND l.classid = ((hashtext($1)::bigint >> 32) & 4294967295)::oid
    AND l.objid = (hashtext($1)::bigint & 4294967295)::oid
    AND a.state_change < clock_timestamp() - make_interval(secs => $2::float8 / 1000)`

interface Held {
  readonly scope: Scope.Closeable
  readonly connection: SqlConnection.Connection
  readonly networks: Set<string>
  /** Completed when this connection's leadership ends. */
  readonly lost: Deferred.Deferred<void>
}

/** Lets go of every lock on `current`'s connection and returns it to the pool (bounded: a silent connection is not waited for). */
const unlockAndClose = (checkMillis: number, current: Held) =>
  within(checkMillis, current.connection.execute("SELECT pg_advisory_unlock_all()", [], undefined), Scope.close(current.scope, Exit.void)).pipe(
    Effect.andThen(Scope.close(current.scope, Exit.void)),
    Effect.catchTag("Unanswered", () => Effect.void),
    Effect.catchCause(() => Scope.close(current.scope, Exit.void))
  )

/** Once a statement of `lead` left unanswered is over, its connection goes back (the leadership on it ended when it went unanswered). */
const abandon = (current: Held) => Scope.close(current.scope, Exit.void)

const tryLock = (checkMillis: number, current: Held, network: string) =>
  within(checkMillis, current.connection.execute("SELECT pg_try_advisory_lock(hashtext($1)) AS locked", [lockName(network)], undefined), abandon(current)).pipe(
    Effect.flatMap(decodeLocked),
    Effect.map(([{ locked }]) => locked)
  )

/** TERMINATE_SILENT_HOLDER for `network`: the rows of the sessions it ended. */
const terminateSilentHolder = (checkMillis: number, leaseMs: number, current: Held, network: string) =>
  within(checkMillis, current.connection.execute(TERMINATE_SILENT_HOLDER, [lockName(network), leaseMs], undefined), abandon(current))

/**
 * One leader per network across service instances: a PostgreSQL session advisory lock per
 * network, held on one reserved connection for as long as this process watches. The leader checks
 * that connection every third of CHECKOUT_WATCHER_LEASE_MS, bounded by the same time, and steps
 * down at the first check that fails or goes unanswered: it stops its polls (`fenced`) and lets the
 * connection go. Another instance that finds the lock held by a session silent for the whole lease
 * terminates that session and takes the lock. On the embedded database there is one process, which
 * always leads (and holding a reserved connection would take PGlite's only one).
 */
export class WatcherLeadership extends Context.Service<WatcherLeadership, {
  /** Whether this process leads `network` now (acquiring the lock when free, or held by a silent leader). */
  readonly lead: (network: string) => Effect.Effect<boolean>
  /**
   * Runs `self` only while this process leads `network`: interrupted when the leadership is lost
   * meanwhile, and then (or when not leading) `undefined`.
   */
  readonly fenced: (network: string) => <A, E, R>(self: Effect.Effect<A, E, R>) => Effect.Effect<A | undefined, E, R>
  /** How soon an instance that does not lead asks again: a leader that went silent is replaced within the lease and this. */
  readonly standbyMillis: number
}>()("Chains/WatcherLeadership") {
  static readonly layer = Layer.effect(
    WatcherLeadership,
    Effect.gen(function*() {
      const { databaseUrl, watcherLeaseMs } = yield* AppConfig
      const checkMillis = Math.floor(watcherLeaseMs / 3)
      if (databaseUrl === undefined) return { lead: () => Effect.succeed(true), fenced: () => (self) => self, standbyMillis: checkMillis }
      const sql = yield* SqlClient.SqlClient
      let held: Held | undefined
      // One `lead` at a time: the networks' loops start together, and two that each found no held
      // connection would each reserve one, the second replacing the first with its lock still on it.
      const oneAtATime = yield* Semaphore.make(1)

      /**
       * Ends the leadership of `current` at once; `letGo` then returns its connection to the pool in
       * the background, so that stepping down never waits on a silent network. A connection whose
       * statement was abandoned goes back only once that statement is over (answered, or the
       * connection failed for good and the pool replaces it).
       */
      const stepDown = (current: Held, letGo: Effect.Effect<void>) =>
        Effect.gen(function*() {
          if (held === current) held = undefined
          yield* Deferred.succeed(current.lost, undefined)
          yield* Effect.forkDetach(letGo)
        })
      // On shutdown the lock is let go before the process goes on (bounded: a silent connection is not waited for).
      yield* Effect.addFinalizer(() =>
        Effect.suspend(() => {
          const current = held
          return current === undefined ? Effect.void : Effect.andThen(stepDown(current, Effect.void), unlockAndClose(checkMillis, current))
        })
      )

      const check = Effect.suspend(() => {
        const current = held
        if (current === undefined) return Effect.void
        const close = Scope.close(current.scope, Exit.void)
        return within(checkMillis, current.connection.execute("SELECT 1", [], undefined), close).pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning("Lost the chain watchers' leadership connection; stepping down", cause).pipe(
              Effect.annotateLogs({ networks: [...current.networks].join(", ") }),
              Effect.andThen(stepDown(current, unanswered(cause) ? Effect.void : close))
            )
          )
        )
      })
      yield* check.pipe(Effect.repeat(Schedule.spaced(Duration.millis(checkMillis))), Effect.forkScoped)

      const connection = Effect.gen(function*() {
        if (held !== undefined) return held
        const scope = yield* Scope.make()
        const reserved = yield* Scope.provide(sql.reserve, scope).pipe(Effect.onError(() => Scope.close(scope, Exit.void)))
        held = { scope, connection: reserved, networks: new Set(), lost: yield* Deferred.make<void>() }
        return held
      })

      const lead = (network: string) => {
        let current: Held | undefined
        return Effect.gen(function*() {
          current = yield* connection
          if (current.networks.has(network)) return true
          let locked = yield* tryLock(checkMillis, current, network)
          if (!locked) {
            const terminated = yield* terminateSilentHolder(checkMillis, watcherLeaseMs, current, network)
            if (terminated.length > 0) {
              yield* Effect.logWarning("Terminated the silent chain watcher leader's session").pipe(Effect.annotateLogs({ network }))
              locked = yield* tryLock(checkMillis, current, network)
            }
          }
          if (locked && held === current) {
            current.networks.add(network)
            yield* Effect.logInfo("Leading the chain watcher").pipe(Effect.annotateLogs({ network }))
          }
          return locked && held === current
        }).pipe(
          Effect.catchCause((cause) =>
            Effect.logWarning("Chain watcher leadership unavailable", cause).pipe(
              // A connection that does not answer is not trusted with any lock; one that failed and
              // holds none is of no use. The next call starts over on a new one.
              Effect.andThen(Effect.suspend(() =>
                current === undefined || held !== current
                  ? Effect.void
                  : unanswered(cause)
                  ? stepDown(current, Effect.void)
                  : current.networks.size > 0
                  ? Effect.void
                  : stepDown(current, Scope.close(current.scope, Exit.void))
              )),
              Effect.as(false)
            )
          ),
          oneAtATime.withPermit,
          Effect.withSpan("WatcherLeadership.lead", { attributes: { network } })
        )
      }

      const fenced = (network: string) => <A, E, R>(self: Effect.Effect<A, E, R>): Effect.Effect<A | undefined, E, R> =>
        Effect.suspend(() => {
          const current = held
          if (current === undefined || !current.networks.has(network)) return Effect.succeed(undefined)
          return Effect.raceFirst(
            self,
            Deferred.await(current.lost).pipe(
              Effect.andThen(Effect.logWarning("Chain watcher stepped down: poll stopped").pipe(Effect.annotateLogs({ network }))),
              Effect.as(undefined)
            )
          )
        })

      return { lead, fenced, standbyMillis: checkMillis }
    })
  )
}
