import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { bigintColumn } from "../db/Columns.ts"

const StatusCount = Schema.Struct({ status: Schema.String, count: Schema.Finite })
const DayTotal = Schema.Struct({ day: Schema.String, usdMicros: bigintColumn(Schema.BigInt) })
const Counts = Schema.Struct({ openExceptions: Schema.Finite, waitingRefunds: Schema.Finite })

/** A merchant's dashboard overview as the database sums it. */
export interface OverviewRecord {
  readonly statusCounts: ReadonlyArray<typeof StatusCount.Type>
  /** USD (micros) of the payments observed each UTC day since the start, days without payments left out. */
  readonly receivedByDay: ReadonlyArray<typeof DayTotal.Type>
  readonly openExceptions: number
  /** Refunds asked for and not yet paid by the merchant (`requested`). */
  readonly waitingRefunds: number
}

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const statusCounts = SqlSchema.findAll({
    Request: Schema.String,
    Result: StatusCount,
    execute: (merchantId) => sql`SELECT status, count(*)::int AS count FROM invoices WHERE merchant_id = ${merchantId} GROUP BY status`
  })
  // A payment a reorganisation removed was never received.
  const receivedByDay = SqlSchema.findAll({
    Request: Schema.Struct({ merchantId: Schema.String, since: Schema.Date }),
    Result: DayTotal,
    execute: ({ merchantId, since }) =>
      sql`SELECT to_char(p.observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(p.usd_micros)::text AS usd_micros
        FROM payments p JOIN invoices i ON i.id = p.invoice_id
        WHERE i.merchant_id = ${merchantId} AND p.invalidated_at IS NULL AND p.observed_at >= ${since}
        GROUP BY 1 ORDER BY 1`
  })
  const counts = SqlSchema.findOne({
    Request: Schema.String,
    Result: Counts,
    execute: (merchantId) =>
      sql`SELECT (SELECT count(*) FROM invoices WHERE merchant_id = ${merchantId} AND exception_status = 'open')::int AS open_exceptions,
        (SELECT count(DISTINCT payment_option_id) FROM refunds WHERE merchant_id = ${merchantId} AND status = 'requested')::int AS waiting_refunds`
  })
  return {
    overview: (merchantId: string, since: Date) =>
      Effect.all({ statusCounts: statusCounts(merchantId), receivedByDay: receivedByDay({ merchantId, since }), counts: counts(merchantId) }).pipe(
        Effect.map(({ counts, ...rest }) => ({ ...rest, openExceptions: counts.openExceptions, waitingRefunds: counts.waitingRefunds })),
        Effect.orDie
      )
  } satisfies OverviewRepo["Service"]
})

/** The sums behind the dashboard's overview, in three queries. SQL and decode failures are defects here. */
export class OverviewRepo extends Context.Service<OverviewRepo, {
  readonly overview: (merchantId: string, since: Date) => Effect.Effect<OverviewRecord>
}>()("Dashboard/OverviewRepo") {
  static readonly make = make
  static readonly layer = Layer.effect(OverviewRepo, make)
}
