import { Schema } from "effect"

/** A payment option a watcher looks for, under the key its chain matches on (an address, a reference). */
export const WatchedOption = Schema.Struct({
  watchSeq: Schema.BigIntFromString,
  optionId: Schema.String,
  invoiceId: Schema.String,
  merchantId: Schema.String,
  network: Schema.String,
  assetCode: Schema.String,
  tokenContract: Schema.NullOr(Schema.String),
  key: Schema.String,
  payableUntilAt: Schema.Date
})
export type WatchedOption = typeof WatchedOption.Type
