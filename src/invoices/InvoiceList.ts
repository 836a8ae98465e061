import { Data, Effect, Option, Stream } from "effect"
import type { SqlClient } from "effect/sql"
import { decodeKeysetCursor, encodeKeysetCursor } from "../db/KeysetCursor.ts"
import { coverageOf } from "../domain/Coverage.ts"
import { type InvoiceSummary, SUMMARY_SHOWN_FIELDS } from "../domain/InvoiceResponses.ts"
import { picked } from "../domain/InvoiceViews.ts"
import { microsToNumber } from "../domain/Money.ts"
import { type InvoiceFilters, type InvoiceSummaryRecord, InvoiceListRepo } from "./InvoiceListRepo.ts"
import type { MerchantId } from "../domain/Ids.ts"

export class InvalidInvoiceCursor extends Data.TaggedError("InvalidInvoiceCursor")<{}> {}

export type { InvoiceFilters }

/** One event of an invoice's timeline: what its outbox recorded, and when. */
export interface TimelineEntry {
  readonly event: string
  readonly at: string
}

const summaryOf = (row: InvoiceSummaryRecord): InvoiceSummary => ({
  ...picked(row, SUMMARY_SHOWN_FIELDS),
  amountUsd: microsToNumber(row.amountMicros),
  paymentCoverage: coverageOf(row.amountMicros, row.receivedMicros),
  receivedAmountUsd: microsToNumber(row.receivedMicros),
  confirmedAmountUsd: microsToNumber(row.confirmedMicros),
  payableUntilAt: row.payableUntilAt,
  paymentsSummary: row.paymentCount === 0 ? "0" : `${row.paymentCount} (${row.paymentNetworks ?? ""})`
})

const decodeCursor = (cursor: string) => {
  const position = decodeKeysetCursor(cursor)
  return position === undefined ? Effect.fail(new InvalidInvoiceCursor()) : Effect.succeed(position)
}

/** A page of a merchant's invoices, newest first, after an opaque cursor. */
export const listInvoices = Effect.fn("InvoiceList.list")(function*(
  merchantId: MerchantId,
  filters: InvoiceFilters & { readonly cursor?: string | undefined; readonly limit: number }
) {
  const repo = yield* InvoiceListRepo.make
  const after = filters.cursor === undefined ? undefined : yield* decodeCursor(filters.cursor)
  const rows = yield* repo.page(merchantId, { ...filters, after }, filters.limit + 1)
  const page = rows.slice(0, filters.limit).map(summaryOf)
  const last = page.at(-1)
  return { invoices: page, nextCursor: rows.length > filters.limit && last !== undefined ? encodeKeysetCursor(last.createdAt.toISOString(), last.id) : null }
})

const EXPORT_BATCH = 500

/**
 * Every invoice matching the filters, newest first, read in keyset batches so that an export of
 * any size holds one batch in memory at a time.
 */
export const streamInvoices = (merchantId: MerchantId, filters: InvoiceFilters): Stream.Stream<InvoiceSummary, never, SqlClient.SqlClient> =>
  Stream.paginate(undefined as string | undefined, (cursor) =>
    Effect.map(
      listInvoices(merchantId, { ...filters, cursor, limit: EXPORT_BATCH }).pipe(Effect.catchTag("InvalidInvoiceCursor", Effect.die)),
      (page) => [page.invoices, page.nextCursor === null ? Option.none() : Option.some(page.nextCursor)] as const
    ))

/** The invoice's events from its outbox, oldest first: the timeline the dashboard shows. */
export const invoiceTimeline = Effect.fn("InvoiceList.timeline")(function*(invoiceId: string) {
  const repo = yield* InvoiceListRepo.make
  const rows = yield* repo.timeline(invoiceId)
  return rows.map((row): TimelineEntry => ({ event: row.event, at: row.createdAt.toISOString() }))
})

/** The merchant's webhook deliveries of one invoice, newest first (ids only; the log has the rest). */
export const invoiceDeliveryIds = Effect.fn("InvoiceList.deliveries")(function*(merchantId: MerchantId, invoiceId: string) {
  const repo = yield* InvoiceListRepo.make
  return yield* repo.deliveryIds(merchantId, invoiceId)
})
