import { Effect, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { bigintColumn } from "../db/Columns.ts"
import type { PriceQuote } from "../payments/PriceOracle.ts"
import { microsText, ppmAsPercent } from "../payments/PriceSources.ts"

/**
 * What each asset's quote of an invoice rested on (`invoice_quotes`, written with the invoice by
 * InvoiceRepo.insert): the rate, its basis, the spread of the price sources' answers and the
 * sources used and left out. Exact throughout: micro-dollars as bigint, as decimal text in JSON.
 */

const StoredSources = Schema.fromJsonString(Schema.Array(Schema.Struct({
  source: Schema.String,
  usdMicros: Schema.BigIntFromString,
  observedAt: Schema.NullOr(Schema.String)
})))
const StoredLeftOut = Schema.fromJsonString(Schema.Array(Schema.Struct({
  source: Schema.String,
  reason: Schema.String,
  // An outlier's price (sources that did not answer have none).
  usdMicros: Schema.optionalKey(Schema.BigIntFromString)
})))

/** An `invoice_quotes` row without its invoice id (the JSON columns read as text). */
export const QuoteRow = Schema.Struct({
  assetCode: Schema.String,
  usdMicros: bigintColumn(Schema.BigInt),
  basis: Schema.Literals(["sources", "par", "fixed"]),
  spreadPpm: bigintColumn(Schema.BigInt),
  sources: StoredSources,
  leftOut: StoredLeftOut
})

const encodeQuoteRow = Schema.encodeSync(QuoteRow)

/** The rows of an invoice's quotes, for the insert. */
export const quoteRows = (invoiceId: string, quotes: ReadonlyArray<PriceQuote>) =>
  quotes.map(({ assetCode, basis, leftOut, sources, spreadPpm, usdMicros }) => ({
    invoiceId,
    ...encodeQuoteRow({ assetCode, basis, leftOut, sources, spreadPpm, usdMicros })
  }))

/** An invoice's quotes, by asset (none for invoices created before they were recorded). */
export const invoiceQuotes = Effect.fn("InvoiceQuoteRepo.find")(function*(invoiceId: string) {
  const sql = yield* SqlClient.SqlClient
  const find = SqlSchema.findAll({
    Request: Schema.String,
    Result: QuoteRow,
    execute: (id) =>
      sql`SELECT asset_code, usd_micros, basis, spread_ppm, sources::text AS sources, left_out::text AS left_out
        FROM invoice_quotes WHERE invoice_id = ${id} ORDER BY asset_code`
  })
  return yield* Effect.orDie(find(invoiceId))
})

/** A quote as the dashboard shows it: prices as USD decimal text, the spread as a percentage. */
export const QuoteView = Schema.Struct({
  assetCode: Schema.String,
  rateUsd: Schema.String,
  basis: Schema.Literals(["sources", "par", "fixed"]),
  spread: Schema.String,
  sources: Schema.Array(Schema.Struct({ source: Schema.String, priceUsd: Schema.String, observedAt: Schema.NullOr(Schema.String) })),
  leftOut: Schema.Array(Schema.Struct({
    source: Schema.String,
    reason: Schema.String,
    priceUsd: Schema.optionalKey(Schema.String).annotate({ description: "The price of a source left out as an outlier" })
  }))
}).annotate({ identifier: "InvoiceQuote" })

export const quoteView = (quote: typeof QuoteRow.Type): typeof QuoteView.Type => ({
  assetCode: quote.assetCode,
  rateUsd: microsText(quote.usdMicros),
  basis: quote.basis,
  spread: ppmAsPercent(quote.spreadPpm),
  sources: quote.sources.map((source) => ({ source: source.source, priceUsd: microsText(source.usdMicros), observedAt: source.observedAt })),
  leftOut: quote.leftOut.map(({ reason, source, usdMicros }) => ({ source, reason, ...(usdMicros === undefined ? {} : { priceUsd: microsText(usdMicros) }) }))
})
