import { Schema } from "effect"
import { type SqlClient, SqlSchema } from "effect/sql"
import { INVOICE_STATE_FIELDS, type InvoiceRecord } from "../domain/Invoice.ts"
import { encodeInvoiceRow, PaymentRow } from "./InvoiceRows.ts"

/** What the invoice repositories (the merchant's, the evidence's) share. */

/** sql.insert takes a non-empty tuple of rows; callers check emptiness first. */
export const nonEmpty = <A>(rows: ReadonlyArray<A>) => rows as readonly [A, ...Array<A>]

/** What a change of an invoice may update: the lifecycle's fields and the deadline; the rest is fixed at creation. */
const MUTABLE_FIELDS = [...INVOICE_STATE_FIELDS, "payableUntilAt"] as const

export const mutableValues = (invoice: InvoiceRecord) => {
  const columns = encodeInvoiceRow(invoice)
  return Object.fromEntries(MUTABLE_FIELDS.map((field) => [field, columns[field]]))
}

/** An invoice's payments in observation order (a lock that waited for a committed change reads them again). */
export const paymentsOfInvoice = (sql: SqlClient.SqlClient) =>
  SqlSchema.findAll({
    Request: Schema.String,
    Result: PaymentRow,
    execute: (invoiceId) => sql`SELECT * FROM payments WHERE invoice_id = ${invoiceId} ORDER BY observed_at, id`
  })
