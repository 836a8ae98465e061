import { Context, Effect, Layer, Schema } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { DateColumn } from "../db/Columns.ts"
import { idPrefixPattern, likePattern, UUID_PATTERN } from "../db/KeysetCursor.ts"
import { InvoiceSummaryRow, SUMMARY_ROW_COLUMNS } from "./InvoiceRows.ts"
import type { MerchantId } from "../domain/Ids.ts"

const TimelineRow = Schema.Struct({ event: Schema.String, createdAt: DateColumn })
export type TimelineRow = typeof TimelineRow.Type
export type InvoiceSummaryRecord = typeof InvoiceSummaryRow.Type

/** The dashboard's filters of a merchant's invoices (all optional, combined with AND). */
export interface InvoiceFilters {
  /** False: the merchant's test invoices only; true: its live ones only (issue #55: never mixed). */
  readonly livemode: boolean
  readonly status?: string | undefined
  readonly exceptionStatus?: string | undefined
  readonly exceptionType?: string | undefined
  readonly createdFrom?: Date | undefined
  readonly createdTo?: Date | undefined
  /** An invoice id exactly, or a part of the merchant reference or the customer email. */
  readonly q?: string | undefined
}

/** A page's position in the list: continue after this invoice (newest first). */
type PageAfter = { readonly after?: { readonly at: Date; readonly id: string } | undefined }

const PAYMENT_SUMMARY_COLUMNS: Record<string, string> = {
  payment_count: "(SELECT count(*) FROM payments p WHERE p.invoice_id = i.id)::int",
  payment_networks: "(SELECT string_agg(DISTINCT p.network || ' ' || p.asset_code, ', ') FROM payments p WHERE p.invoice_id = i.id)"
}
const SUMMARY_COLUMNS = SUMMARY_ROW_COLUMNS.map(({ column }) => PAYMENT_SUMMARY_COLUMNS[column] === undefined ? `i.${column}` : `${PAYMENT_SUMMARY_COLUMNS[column]} AS ${column}`)
  .join(", ")

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient

  const idPrefixCondition = (q: string) => {
    const prefix = idPrefixPattern(q)
    return prefix === undefined ? [] : [sql`i.id::text LIKE ${prefix}`]
  }

  const conditionsOf = (merchantId: MerchantId, filters: InvoiceFilters & PageAfter) => {
    const conditions = [sql`i.merchant_id = ${merchantId}`, sql`i.livemode = ${filters.livemode}`]
    if (filters.status !== undefined) conditions.push(sql`i.status = ${filters.status}`)
    if (filters.exceptionStatus !== undefined) conditions.push(sql`i.exception_status = ${filters.exceptionStatus}`)
    if (filters.exceptionType !== undefined) conditions.push(sql`i.exception_type = ${filters.exceptionType}`)
    if (filters.createdFrom !== undefined) conditions.push(sql`i.created_at >= ${filters.createdFrom}`)
    if (filters.createdTo !== undefined) conditions.push(sql`i.created_at < ${filters.createdTo}`)
    const q = filters.q?.trim()
    if (q !== undefined && q !== "") {
      conditions.push(UUID_PATTERN.test(q)
        ? sql`i.id = ${q.toLowerCase()}::uuid`
        : sql`${sql.or([sql`i.merchant_reference ILIKE ${likePattern(q)}`, sql`i.customer_email ILIKE ${likePattern(q)}`, ...idPrefixCondition(q)])}`)
    }
    if (filters.after !== undefined) conditions.push(sql`(i.created_at, i.id) < (${filters.after.at}, ${filters.after.id}::uuid)`)
    return conditions
  }

  const page = (merchantId: MerchantId, filters: InvoiceFilters & PageAfter, limit: number) =>
    SqlSchema.findAll({
      Request: Schema.Number,
      Result: InvoiceSummaryRow,
      execute: (limit) =>
        sql`SELECT ${sql.literal(SUMMARY_COLUMNS)} FROM invoices i WHERE ${sql.and(conditionsOf(merchantId, filters))}
        ORDER BY i.created_at DESC, i.id DESC LIMIT ${limit}`
    })(limit).pipe(Effect.orDie)

  const findTimeline = SqlSchema.findAll({
    Request: Schema.String,
    Result: TimelineRow,
    execute: (id) => sql`SELECT event, created_at FROM outbox WHERE invoice_id = ${id} ORDER BY id`
  })
  const findDeliveryIds = SqlSchema.findAll({
    Request: Schema.Struct({ merchantId: Schema.String, invoiceId: Schema.String }),
    Result: Schema.Struct({ id: Schema.String }),
    execute: (request) =>
      sql`SELECT id FROM webhook_deliveries WHERE merchant_id = ${request.merchantId} AND invoice_id = ${request.invoiceId}
        ORDER BY created_at DESC, id DESC`
  })

  return {
    page,
    timeline: (invoiceId: string) => Effect.orDie(findTimeline(invoiceId)),
    deliveryIds: (merchantId: MerchantId, invoiceId: string) => findDeliveryIds({ merchantId, invoiceId }).pipe(Effect.map((rows) => rows.map((row) => row.id)), Effect.orDie)
  } satisfies InvoiceListRepo["Service"]
})

/** The dashboard's reading of a merchant's invoices: pages of summaries, timelines, delivery ids. SQL and decode failures are defects here. */
export class InvoiceListRepo extends Context.Service<InvoiceListRepo, {
  /** Up to `limit` of the merchant's invoices matching `filters`, newest first. */
  readonly page: (merchantId: MerchantId, filters: InvoiceFilters & PageAfter, limit: number) => Effect.Effect<ReadonlyArray<InvoiceSummaryRecord>>
  /** The invoice's outbox events, oldest first. */
  readonly timeline: (invoiceId: string) => Effect.Effect<ReadonlyArray<TimelineRow>>
  /** The ids of the merchant's webhook deliveries of the invoice, newest first. */
  readonly deliveryIds: (merchantId: MerchantId, invoiceId: string) => Effect.Effect<ReadonlyArray<string>>
}>()("Invoices/InvoiceListRepo") {
  /** The repository over the SqlClient at hand (for the list's functions, which take the client from their caller). */
  static readonly make = make
  static readonly layer = Layer.effect(InvoiceListRepo, make)
}
