import { Data, Effect, Option, Schema, Stream } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { decodeKeysetCursor, encodeKeysetCursor, likePattern, UUID_PATTERN } from "../db/KeysetCursor.ts"
import { DateColumn } from "../db/Columns.ts"
import { coverageOf } from "../domain/Coverage.ts"
import { microsToNumber } from "../domain/Money.ts"
import { InvoiceSummaryRow, SUMMARY_ROW_COLUMNS } from "./InvoiceRows.ts"

const TimelineRow = Schema.Struct({ event: Schema.String, createdAt: DateColumn })

export class InvalidInvoiceCursor extends Data.TaggedError("InvalidInvoiceCursor")<{}> {}

/** The dashboard's filters of a merchant's invoices (all optional, combined with AND). */
export interface InvoiceFilters {
  readonly status?: string | undefined
  readonly exceptionStatus?: string | undefined
  readonly exceptionType?: string | undefined
  readonly createdFrom?: Date | undefined
  readonly createdTo?: Date | undefined
  /** An invoice id exactly, or a part of the merchant reference or the customer email. */
  readonly q?: string | undefined
}

/** One row of the invoice list and of the CSV export. */
export interface InvoiceSummary {
  readonly id: string
  readonly createdAt: string
  readonly amountUsd: number
  readonly status: string
  readonly paymentCoverage: string
  readonly receivedAmountUsd: number
  readonly confirmedAmountUsd: number
  readonly productName: string | null
  readonly merchantReference: string | null
  readonly customerEmail: string | null
  readonly payableUntilAt: string
  readonly paymentDetectedAt: string | null
  readonly confirmedAt: string | null
  readonly paidOutOfBandAt: string | null
  readonly exceptionType: string | null
  readonly exceptionStatus: string | null
  readonly exceptionAction: string | null
  readonly exceptionClosedAt: string | null
  /** Count and networks of the payments, e.g. "2 (arbitrum USDT, base USDC)". */
  readonly paymentsSummary: string
}

/** One event of an invoice's timeline: what its outbox recorded, and when. */
export interface TimelineEntry {
  readonly event: string
  readonly at: string
}

const iso = (value: Date | null) => value?.toISOString() ?? null

const PAYMENT_SUMMARY_COLUMNS: Record<string, string> = {
  payment_count: "(SELECT count(*) FROM payments p WHERE p.invoice_id = i.id)::int",
  payment_networks: "(SELECT string_agg(DISTINCT p.network || ' ' || p.asset_code, ', ') FROM payments p WHERE p.invoice_id = i.id)"
}
const SUMMARY_COLUMNS = SUMMARY_ROW_COLUMNS.map(({ column }) => PAYMENT_SUMMARY_COLUMNS[column] === undefined ? `i.${column}` : `${PAYMENT_SUMMARY_COLUMNS[column]} AS ${column}`)
  .join(", ")

const summaryOf = (row: typeof InvoiceSummaryRow.Type): InvoiceSummary => ({
  id: row.id,
  createdAt: row.createdAt.toISOString(),
  amountUsd: microsToNumber(row.amountMicros),
  status: row.status,
  paymentCoverage: coverageOf(row.amountMicros, row.receivedMicros),
  receivedAmountUsd: microsToNumber(row.receivedMicros),
  confirmedAmountUsd: microsToNumber(row.confirmedMicros),
  productName: row.productName,
  merchantReference: row.merchantReference,
  customerEmail: row.customerEmail,
  payableUntilAt: row.payableUntilAt.toISOString(),
  paymentDetectedAt: iso(row.paymentDetectedAt),
  confirmedAt: iso(row.confirmedAt),
  paidOutOfBandAt: iso(row.paidOutOfBandAt),
  exceptionType: row.exceptionType,
  exceptionStatus: row.exceptionStatus,
  exceptionAction: row.exceptionAction,
  exceptionClosedAt: iso(row.exceptionClosedAt),
  paymentsSummary: row.paymentCount === 0 ? "0" : `${row.paymentCount} (${row.paymentNetworks ?? ""})`
})

const decodeCursor = (cursor: string) => {
  const position = decodeKeysetCursor(cursor)
  return position === undefined ? Effect.fail(new InvalidInvoiceCursor()) : Effect.succeed(position)
}

const conditionsOf = (sql: SqlClient.SqlClient, merchantId: string, filters: InvoiceFilters) => {
  const conditions = [sql`i.merchant_id = ${merchantId}`]
  if (filters.status !== undefined) conditions.push(sql`i.status = ${filters.status}`)
  if (filters.exceptionStatus !== undefined) conditions.push(sql`i.exception_status = ${filters.exceptionStatus}`)
  if (filters.exceptionType !== undefined) conditions.push(sql`i.exception_type = ${filters.exceptionType}`)
  if (filters.createdFrom !== undefined) conditions.push(sql`i.created_at >= ${filters.createdFrom}`)
  if (filters.createdTo !== undefined) conditions.push(sql`i.created_at < ${filters.createdTo}`)
  const q = filters.q?.trim()
  if (q !== undefined && q !== "") {
    conditions.push(UUID_PATTERN.test(q)
      ? sql`i.id = ${q.toLowerCase()}::uuid`
      : sql`(i.merchant_reference ILIKE ${likePattern(q)} OR i.customer_email ILIKE ${likePattern(q)})`)
  }
  return conditions
}

/** A page of a merchant's invoices, newest first, after an opaque cursor. */
export const listInvoices = Effect.fn("InvoiceList.list")(function*(
  merchantId: string,
  filters: InvoiceFilters & { readonly cursor?: string | undefined; readonly limit: number }
) {
  const sql = yield* SqlClient.SqlClient
  const conditions = conditionsOf(sql, merchantId, filters)
  if (filters.cursor !== undefined) {
    const after = yield* decodeCursor(filters.cursor)
    conditions.push(sql`(i.created_at, i.id) < (${after.at}, ${after.id}::uuid)`)
  }
  const rows = yield* SqlSchema.findAll({
    Request: Schema.Number,
    Result: InvoiceSummaryRow,
    execute: (limit) =>
      sql`SELECT ${sql.literal(SUMMARY_COLUMNS)} FROM invoices i WHERE ${sql.and(conditions)}
        ORDER BY i.created_at DESC, i.id DESC LIMIT ${limit}`
  })(filters.limit + 1).pipe(Effect.orDie)
  const page = rows.slice(0, filters.limit).map(summaryOf)
  const last = page.at(-1)
  return { invoices: page, nextCursor: rows.length > filters.limit && last !== undefined ? encodeKeysetCursor(last.createdAt, last.id) : null }
})

const EXPORT_BATCH = 500

/**
 * Every invoice matching the filters, newest first, read in keyset batches so that an export of
 * any size holds one batch in memory at a time.
 */
export const streamInvoices = (merchantId: string, filters: InvoiceFilters): Stream.Stream<InvoiceSummary, never, SqlClient.SqlClient> =>
  Stream.paginate(undefined as string | undefined, (cursor) =>
    Effect.map(
      listInvoices(merchantId, { ...filters, cursor, limit: EXPORT_BATCH }).pipe(Effect.catchTag("InvalidInvoiceCursor", Effect.die)),
      (page) => [page.invoices, page.nextCursor === null ? Option.none() : Option.some(page.nextCursor)] as const
    ))

/** The invoice's events from its outbox, oldest first: the timeline the dashboard shows. */
export const invoiceTimeline = Effect.fn("InvoiceList.timeline")(function*(invoiceId: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* SqlSchema.findAll({
    Request: Schema.String,
    Result: TimelineRow,
    execute: (id) => sql`SELECT event, created_at FROM outbox WHERE invoice_id = ${id} ORDER BY id`
  })(invoiceId).pipe(Effect.orDie)
  return rows.map((row): TimelineEntry => ({ event: row.event, at: row.createdAt.toISOString() }))
})

/** The merchant's webhook deliveries of one invoice, newest first (ids only; the log has the rest). */
export const invoiceDeliveryIds = Effect.fn("InvoiceList.deliveries")(function*(merchantId: string, invoiceId: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* SqlSchema.findAll({
    Request: Schema.Struct({ merchantId: Schema.String, invoiceId: Schema.String }),
    Result: Schema.Struct({ id: Schema.String }),
    execute: (request) =>
      sql`SELECT id FROM webhook_deliveries WHERE merchant_id = ${request.merchantId} AND invoice_id = ${request.invoiceId}
        ORDER BY created_at DESC, id DESC`
  })({ merchantId, invoiceId }).pipe(Effect.orDie)
  return rows.map((row) => row.id)
})
