import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import type { InvoiceRecord } from "../domain/Invoice.ts"
import { NullableDate } from "../domain/Timestamps.ts"
import { statusesAccepting } from "../lifecycle/Lifecycle.ts"
import { InvoiceRow } from "./InvoiceRows.ts"

/**
 * The statuses the deadline moves, as the lifecycle machine answers it, spelled as SQL literals:
 * the planner matches the partial index invoices_due_for_expiry only against a literal list.
 */
const EXPIRABLE_STATUSES = statusesAccepting({ type: "DEADLINE_PASSED" }).map((status) => `'${status}'`).join(", ")

const WatchedNetwork = Schema.Struct({ network: Schema.String, livemode: Schema.Boolean, chainTime: NullableDate })

/** The deadline sweeper's claims of invoices due for expiry; it saves them through `InvoiceRepo` in the same transaction. */
export class ExpiryRepo extends Context.Service<ExpiryRepo, {
  /**
   * Within a transaction: locks up to `batchSize` open invoices whose payable window ended before
   * `now`, skipping those locked by others and those with an option on a network whose watcher of
   * the invoice's mode (`livemode`) has processed chain data only up to a time before the invoice's
   * deadline (`chainTime` null: not yet).
   */
  readonly claimDueForExpiry: (
    now: Date,
    batchSize: number,
    watched: ReadonlyArray<{ readonly network: string; readonly livemode: boolean; readonly chainTime: Date | null }>
  ) => Effect.Effect<ReadonlyArray<InvoiceRecord>>
}>()("Invoices/ExpiryRepo") {
  static readonly layer = Layer.effect(
    ExpiryRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const findDueForExpiry = SqlSchema.findAll({
        Request: Schema.Struct({ now: Schema.Date, batchSize: Schema.Number, watched: Schema.Array(WatchedNetwork) }),
        Result: InvoiceRow,
        execute: ({ batchSize, now, watched }) =>
          sql`SELECT i.* FROM invoices i
            WHERE i.status IN (${sql.literal(EXPIRABLE_STATUSES)}) AND i.payable_until_at < ${now}${
            watched.length === 0 ? sql`` : sql`
              AND NOT EXISTS (SELECT 1 FROM payment_options o
                JOIN json_to_recordset(${JSON.stringify(watched)}::json) AS w(network text, livemode boolean, "chainTime" timestamptz)
                  ON w.network = o.network AND w.livemode = i.livemode
                WHERE o.invoice_id = i.id AND (w."chainTime" IS NULL OR w."chainTime" < i.payable_until_at))`
          }
            ORDER BY i.payable_until_at LIMIT ${batchSize} FOR UPDATE OF i SKIP LOCKED`
      })
      return { claimDueForExpiry: (now, batchSize, watched) => Effect.orDie(findDueForExpiry({ now, batchSize, watched })) }
    })
  )
}
