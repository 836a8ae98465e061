import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { ChainCursorState } from "./ChainWatcherStatus.ts"
import { exitWithin } from "./Deadline.ts"

/** How long readiness waits for the database to answer. */
export const READINESS_DEADLINE = "2 seconds"

const Backlog = Schema.Struct({ backlog: Schema.Finite })

/**
 * Reads of the service's operational state: database readiness, the chain watchers' published
 * progress and the webhook backlog. SQL failures are defects here, at the repository edge,
 * except for `ready`, whose answer is exactly whether the database works.
 */
export class MonitoringRepo extends Context.Service<MonitoringRepo, {
  /** True when the database answered `SELECT 1` within {@link READINESS_DEADLINE}; never fails. */
  readonly ready: Effect.Effect<boolean>
  /** Every row of `chain_cursors` (one per network a watcher has published for). */
  readonly chainCursors: Effect.Effect<ReadonlyArray<ChainCursorState>>
  /** Outbox events not yet handed to delivery plus deliveries still pending. */
  readonly webhookBacklog: Effect.Effect<number>
}>()("Monitoring/MonitoringRepo") {
  static readonly layer = Layer.effect(
    MonitoringRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const findCursors = SqlSchema.findAll({
        Request: Schema.Void,
        Result: ChainCursorState,
        execute: () =>
          sql`SELECT network, processed_height::text AS processed_height, chain_time, head_height::text AS head_height,
            head_time, last_error, last_error_at, updated_at, endpoints FROM chain_cursors ORDER BY network`
      })
      // Both counts read partial indexes (outbox_pending, webhook_deliveries_due).
      const findBacklog = SqlSchema.findOne({
        Request: Schema.Void,
        Result: Backlog,
        execute: () =>
          sql`SELECT ((SELECT count(*) FROM outbox WHERE dispatched_at IS NULL)
            + (SELECT count(*) FROM webhook_deliveries WHERE status = 'pending'))::int AS backlog`
      })

      return {
        ready: exitWithin(sql`SELECT 1`, READINESS_DEADLINE).pipe(
          Effect.map((exit) => exit !== undefined && exit._tag === "Success"),
          Effect.withSpan("MonitoringRepo.ready")
        ),
        chainCursors: findCursors(undefined).pipe(Effect.orDie, Effect.withSpan("MonitoringRepo.chainCursors")),
        webhookBacklog: findBacklog(undefined).pipe(
          Effect.map(({ backlog }) => backlog),
          Effect.orDie,
          Effect.withSpan("MonitoringRepo.webhookBacklog")
        )
      }
    })
  )
}
