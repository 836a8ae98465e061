import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { bigintColumn } from "../db/Columns.ts"
import type { MerchantId } from "../domain/Ids.ts"

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
    Request: Schema.Struct({ merchantId: Schema.String, livemode: Schema.Boolean }),
    Result: StatusCount,
    execute: ({ merchantId, livemode }) => sql`SELECT status, count(*)::int AS count FROM invoices WHERE merchant_id = ${merchantId} AND livemode = ${livemode} GROUP BY status`
  })
  // A payment a reorganisation removed was never received.
  const receivedByDay = SqlSchema.findAll({
    Request: Schema.Struct({ merchantId: Schema.String, since: Schema.Date, livemode: Schema.Boolean }),
    Result: DayTotal,
    execute: ({ merchantId, since, livemode }) =>
      sql`SELECT to_char(p.observed_at AT TIME ZONE 'UTC', 'YYYY-MM-DD') AS day, sum(p.usd_micros)::text AS usd_micros
        FROM payments p JOIN invoices i ON i.id = p.invoice_id
        WHERE i.merchant_id = ${merchantId} AND i.livemode = ${livemode} AND p.invalidated_at IS NULL AND p.observed_at >= ${since}
        GROUP BY 1 ORDER BY 1`
  })
  const counts = SqlSchema.findOne({
    Request: Schema.Struct({ merchantId: Schema.String, livemode: Schema.Boolean }),
    Result: Counts,
    execute: ({ merchantId, livemode }) =>
      sql`SELECT (SELECT count(*) FROM invoices WHERE merchant_id = ${merchantId} AND livemode = ${livemode} AND exception_status = 'open')::int AS open_exceptions,
        (SELECT count(DISTINCT r.payment_option_id) FROM refunds r JOIN invoices i ON i.id = r.invoice_id
          WHERE r.merchant_id = ${merchantId} AND i.livemode = ${livemode} AND r.status = 'requested')::int AS waiting_refunds`
  })
  return {
    overview: (merchantId: MerchantId, since: Date, livemode: boolean) =>
      Effect.all({ statusCounts: statusCounts({ merchantId, livemode }), receivedByDay: receivedByDay({ merchantId, since, livemode }), counts: counts({ merchantId, livemode }) })
        .pipe(
          Effect.map(({ counts, ...rest }) => ({ ...rest, openExceptions: counts.openExceptions, waitingRefunds: counts.waitingRefunds })),
          Effect.orDie
        )
  } satisfies OverviewRepo["Service"]
})

/** The sums behind the dashboard's overview, in three queries. SQL and decode failures are defects here. */
export class OverviewRepo extends Context.Service<OverviewRepo, {
  /** The sums of the merchant's live invoices, or of its test ones (`livemode` false): never both. */
  readonly overview: (merchantId: MerchantId, since: Date, livemode: boolean) => Effect.Effect<OverviewRecord>
}>()("Dashboard/OverviewRepo") {
  static readonly make = make
  static readonly layer = Layer.effect(OverviewRepo, make)
}
