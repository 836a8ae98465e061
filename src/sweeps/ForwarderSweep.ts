import { Schema } from "effect"

export const SweepStatus = Schema.Literals(["pending", "failed", "sent", "swept"])
export type SweepStatus = typeof SweepStatus.Type

/**
 * The sweep of one payment to a wallet-contract forwarder on to the merchant's recipient:
 * `pending` (waiting for confirmation or its turn), `failed` (the last attempt failed; it is
 * retried with back-off), `sent` (the sweep transaction is in flight) or `swept`.
 */
export const ForwarderSweep = Schema.Struct({
  paymentId: Schema.String,
  invoiceId: Schema.String,
  network: Schema.String,
  assetCode: Schema.String,
  contractAddress: Schema.String.annotate({ description: "The forwarder the payment went to" }),
  recipient: Schema.String.annotate({ description: "Where the sweep sends it" }),
  amountAtomic: Schema.String.annotate({ description: "Amount of the payment in the token's smallest unit (decimal string)" }),
  paymentConfirmed: Schema.Boolean,
  status: SweepStatus,
  attempts: Schema.Int,
  lastError: Schema.NullOr(Schema.String),
  nextAttemptAt: Schema.NullOr(Schema.String),
  transactionHash: Schema.NullOr(Schema.String).annotate({ description: "The sweep transaction (deployAndFlush of the factory)" }),
  sweptAt: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ForwarderSweep" })
export type ForwarderSweep = typeof ForwarderSweep.Type
