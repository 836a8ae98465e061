import { Context, Duration, Effect, Layer, Queue } from "effect"
import { SqlClient } from "effect/sql"

/** How often, and how patiently, an unavailable database is asked `SELECT 1` until it answers. */
const PROBE_EVERY = Duration.millis(500)
const PROBE_WAIT = Duration.seconds(1)

/**
 * Whether the database is believed to answer. A request that fails on the database (or runs out
 * of its time budget) reports it; from then on requests that need the database are answered 503
 * at once, instead of each waiting for a stalled connection, while one probe asks `SELECT 1`
 * until it answers, which makes it available again by itself.
 */
export class DatabaseAvailability extends Context.Service<DatabaseAvailability, {
  readonly available: () => boolean
  readonly reportFailure: Effect.Effect<void>
}>()("Db/DatabaseAvailability") {
  static readonly layer = Layer.effect(
    DatabaseAvailability,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      let available = true
      const suspected = yield* Queue.sliding<void>(1)
      const answers = sql`SELECT 1`.pipe(
        Effect.timeoutOption(PROBE_WAIT),
        Effect.map((answer) => answer._tag === "Some"),
        Effect.catchCause(() => Effect.succeed(false))
      )
      const probeUntilAvailable: Effect.Effect<void> = Effect.flatMap(answers, (ok) =>
        ok
          ? Effect.sync(() => {
            available = true
          }).pipe(Effect.andThen(Effect.logInfo("Database answers again; serving requests")))
          : Effect.sleep(PROBE_EVERY).pipe(Effect.andThen(() => probeUntilAvailable)))
      yield* Effect.forkScoped(Effect.forever(Queue.take(suspected).pipe(Effect.andThen(probeUntilAvailable))))
      return {
        available: () => available,
        reportFailure: Effect.suspend(() => {
          if (!available) return Effect.void
          available = false
          return Effect.logError("Database unavailable; answering 503 until it answers again").pipe(
            Effect.andThen(Queue.offer(suspected, undefined)),
            Effect.asVoid
          )
        })
      }
    })
  )
}
