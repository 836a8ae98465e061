import { Clock, Context, Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { invoiceFromRow } from "./InvoiceRows.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"
import { applyEvents } from "../lifecycle/Settlement.ts"

type Row = Record<string, unknown>

/**
 * Expires invoices whose final payable deadline has passed. Each batch is claimed with
 * FOR UPDATE SKIP LOCKED through the partial index on payable_until_at, so several service
 * instances sweep side by side without waiting on or double-processing each other.
 */
export class DeadlineSweeper extends Context.Service<DeadlineSweeper, {
  /** Sweeps until nothing is due; returns how many invoices expired. */
  readonly sweep: (batchSize?: number) => Effect.Effect<number>
}>()("Invoices/DeadlineSweeper") {
  static readonly layer = Layer.effect(
    DeadlineSweeper,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* InvoiceRepo

      const sweepBatch = (batchSize: number) =>
        repo.withTransaction(Effect.gen(function*() {
          const now = new Date(yield* Clock.currentTimeMillis)
          const rows = yield* sql<Row>`SELECT * FROM invoices
            WHERE status IN ('awaiting_payment', 'partially_paid') AND payable_until_at < ${now}
            ORDER BY payable_until_at LIMIT ${batchSize} FOR UPDATE SKIP LOCKED`.pipe(Effect.orDie)
          for (const row of rows) {
            const expired = applyEvents(invoiceFromRow(row), [{ type: "DEADLINE_PASSED" }], now)
            yield* repo.save(expired.invoice, expired.events)
          }
          return rows.length
        }))

      const sweep = Effect.fn("DeadlineSweeper.sweep")(function*(batchSize: number = 500) {
        let total = 0
        while (true) {
          const swept = yield* sweepBatch(batchSize)
          total += swept
          if (swept < batchSize) return total
        }
      })
      return { sweep }
    })
  )

  /** The background fiber: sweeps every CHECKOUT_SWEEP_INTERVAL_MS while the service runs. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const { sweepIntervalMs } = yield* AppConfig
    const sweeper = yield* DeadlineSweeper
    yield* sweeper.sweep().pipe(
      Effect.catchCause((cause) => Effect.logError("Deadline sweep failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.millis(sweepIntervalMs))),
      Effect.forkScoped
    )
  }))
}
