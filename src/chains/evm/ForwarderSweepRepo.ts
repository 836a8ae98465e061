import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"

/** A confirmed payment to a forwarder that has not been swept to the merchant's recipient yet. */
export const DuePayment = Schema.Struct({
  paymentId: Schema.String,
  optionId: Schema.String,
  sweepStatus: Schema.Literals(["pending", "sent"]),
  sweepTransactionHash: Schema.NullOr(Schema.String),
  sweepAttempts: Schema.Int,
  contractAddress: Schema.String,
  recipient: Schema.String,
  tokenContract: Schema.String
})
export type DuePayment = typeof DuePayment.Type

/** The sweep state of payments to forwarders (wallet-contract rail). SQL and decode failures are defects here. */
export class ForwarderSweepRepo extends Context.Service<ForwarderSweepRepo, {
  /** The network's confirmed, valid payments to live invoices' forwarders (a test invoice's holds no funds) whose sweep is pending or sent and due at `now`, oldest first. */
  readonly due: (network: string, now: Date) => Effect.Effect<ReadonlyArray<DuePayment>>
  readonly markSent: (paymentIds: ReadonlyArray<string>, transactionHash: string) => Effect.Effect<void>
  readonly markSwept: (paymentIds: ReadonlyArray<string>, at: Date) => Effect.Effect<void>
  /** Back to pending, with the attempt count, the error and when to try again. */
  readonly markFailed: (paymentIds: ReadonlyArray<string>, failure: { readonly attempts: number; readonly error: string; readonly nextAttemptAt: Date }) => Effect.Effect<void>
}>()("Chains/ForwarderSweepRepo") {
  static readonly layer = Layer.effect(
    ForwarderSweepRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const duePayments = SqlSchema.findAll({
        Request: Schema.Struct({ network: Schema.String, now: Schema.Date }),
        Result: DuePayment,
        execute: ({ network, now }) =>
          sql`SELECT p.id AS payment_id, o.id AS option_id, p.sweep_status, p.sweep_transaction_hash, p.sweep_attempts,
              o.option_payload->>'contractAddress' AS contract_address, o.option_payload->>'recipient' AS recipient, o.token_contract
            FROM payments p JOIN payment_options o ON o.id = p.payment_option_id JOIN invoices i ON i.id = p.invoice_id
            WHERE p.network = ${network} AND p.sweep_status IN ('pending', 'sent') AND p.confirmed_at IS NOT NULL AND i.livemode
              AND p.invalidated_at IS NULL AND (p.sweep_next_attempt_at IS NULL OR p.sweep_next_attempt_at <= ${now})
            ORDER BY p.observed_at`
      })
      return {
        due: (network, now) => Effect.orDie(duePayments({ network, now })),
        markSent: (ids, hash) => Effect.orDie(sql`UPDATE payments SET sweep_status = 'sent', sweep_transaction_hash = ${hash}, sweep_error = NULL WHERE ${sql.in("id", ids)}`),
        markSwept: (ids, now) =>
          Effect.orDie(sql`UPDATE payments SET sweep_status = 'swept', swept_at = ${now}, sweep_error = NULL, sweep_next_attempt_at = NULL
          WHERE ${sql.in("id", ids)}`),
        markFailed: (ids, { attempts, error, nextAttemptAt }) =>
          Effect.orDie(sql`UPDATE payments SET sweep_status = 'pending', sweep_attempts = ${attempts}, sweep_error = ${error},
            sweep_next_attempt_at = ${nextAttemptAt}
          WHERE ${sql.in("id", ids)}`)
      }
    })
  )
}
