import { Schema } from "effect"

/**
 * A deposit that reached one of an invoice's addresses but matches none of its payment options
 * (wrong token, wrong EVM network, wrong mint). It never counts toward the invoice; the merchant
 * sees it so that the funds are not lost. Amounts and heights are decimal strings, times ISO 8601.
 */
export const UnmatchedDeposit = Schema.Struct({
  id: Schema.String,
  invoiceId: Schema.String,
  network: Schema.String,
  assetCode: Schema.String,
  tokenContract: Schema.String.annotate({ description: "Token contract or mint that was transferred" }),
  toAddress: Schema.String,
  transactionHash: Schema.String,
  outputIndex: Schema.Int.annotate({ description: "Output or log index within the transaction" }),
  amountAtomic: Schema.String.annotate({ description: "Amount in the token's smallest unit (decimal string)" }),
  blockHeight: Schema.NullOr(Schema.String).annotate({ description: "Decimal string" }),
  blockHash: Schema.NullOr(Schema.String),
  chainTime: Schema.String.annotate({ description: "Block time of the transfer" }),
  reason: Schema.String.annotate({ description: "Why it matches no option, e.g. wrong_token or wrong_network" }),
  detectedAt: Schema.String,
  invalidatedAt: Schema.NullOr(Schema.String).annotate({ description: "Set when a chain reorganisation removed the transfer" }),
  invalidationReason: Schema.NullOr(Schema.String)
}).annotate({ identifier: "UnmatchedDeposit" })
export type UnmatchedDeposit = typeof UnmatchedDeposit.Type
