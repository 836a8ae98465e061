import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { type ForwarderSweep, SweepStatus } from "./ForwarderSweep.ts"
import { NullableDate } from "../domain/Timestamps.ts"
import type { MerchantId } from "../domain/Ids.ts"

const Row = Schema.Struct({
  paymentId: Schema.String,
  invoiceId: Schema.String,
  network: Schema.String,
  assetCode: Schema.String,
  contractAddress: Schema.String,
  recipient: Schema.String,
  amountAtomic: Schema.String,
  confirmedAt: NullableDate,
  sweepStatus: Schema.Literals(["pending", "sent", "swept"]),
  sweepAttempts: Schema.Int,
  sweepError: Schema.NullOr(Schema.String),
  sweepNextAttemptAt: NullableDate,
  sweepTransactionHash: Schema.NullOr(Schema.String),
  sweptAt: NullableDate
})

const view = (row: typeof Row.Type): ForwarderSweep => ({
  paymentId: row.paymentId,
  invoiceId: row.invoiceId,
  network: row.network,
  assetCode: row.assetCode,
  contractAddress: row.contractAddress,
  recipient: row.recipient,
  amountAtomic: row.amountAtomic,
  paymentConfirmed: row.confirmedAt !== null,
  status: row.sweepStatus === "pending" && row.sweepError !== null ? "failed" : row.sweepStatus,
  attempts: row.sweepAttempts,
  lastError: row.sweepError,
  nextAttemptAt: row.sweepNextAttemptAt?.toISOString() ?? null,
  transactionHash: row.sweepTransactionHash,
  sweptAt: row.sweptAt?.toISOString() ?? null
})

/** The calling account's forwarder sweeps (wallet-contract payments on their way to the recipient). */
export class SweepsRepo extends Context.Service<SweepsRepo, {
  /** The newest 100 of the live invoices' payments (of the test invoices' with `livemode` false), optionally of one status. */
  readonly list: (merchantId: MerchantId, status: SweepStatus | undefined, livemode?: boolean) => Effect.Effect<ReadonlyArray<ForwarderSweep>>
}>()("Sweeps/SweepsRepo") {
  static readonly layer = Layer.effect(
    SweepsRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const find = SqlSchema.findAll({
        Request: Schema.Struct({ merchantId: Schema.String, status: Schema.NullOr(SweepStatus), livemode: Schema.Boolean }),
        Result: Row,
        execute: ({ merchantId, status, livemode }) => {
          const filter = status === null
            ? sql`p.sweep_status IS NOT NULL`
            : status === "failed"
            ? sql`p.sweep_status = 'pending' AND p.sweep_error IS NOT NULL`
            : status === "pending"
            ? sql`p.sweep_status = 'pending' AND p.sweep_error IS NULL`
            : sql`p.sweep_status = ${status}`
          return sql`SELECT p.id AS payment_id, p.invoice_id, p.network, p.asset_code,
              o.option_payload->>'contractAddress' AS contract_address, o.option_payload->>'recipient' AS recipient,
              p.amount_atomic::text AS amount_atomic, p.confirmed_at, p.sweep_status, p.sweep_attempts, p.sweep_error,
              p.sweep_next_attempt_at, p.sweep_transaction_hash, p.swept_at
            FROM payments p JOIN invoices i ON i.id = p.invoice_id JOIN payment_options o ON o.id = p.payment_option_id
            WHERE i.merchant_id = ${merchantId} AND i.livemode = ${livemode} AND p.invalidated_at IS NULL AND ${filter}
            ORDER BY p.observed_at DESC, p.id DESC LIMIT 100`
        }
      })
      return {
        list: Effect.fn("SweepsRepo.list")(function*(merchantId, status, livemode = true) {
          return (yield* find({ merchantId, status: status ?? null, livemode })).map(view)
        }, Effect.orDie)
      }
    })
  )
}
