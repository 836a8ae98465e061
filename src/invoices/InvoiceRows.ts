import { Schema, SchemaGetter, String as Str, Struct } from "effect"
import { DateColumn, isBigintColumn, NullableDateColumn, rowFields, rowOf } from "../db/Columns.ts"
import { Invoice, type InvoiceRecord, Payment, PaymentOption } from "../domain/Invoice.ts"
import { SUMMARY_SHOWN_FIELDS } from "../domain/InvoiceResponses.ts"

/**
 * Row schemas of the invoice tables, derived from the entities of contract/Invoice.ts (`rowOf`:
 * the same fields with the column codec each type calls for), and the invoice's timing spread
 * over its columns. Keys are camelCase; the client maps them to snake_case columns.
 */

const NullableNumber = Schema.NullOr(Schema.Number)

const { timing: _timing, ...invoiceFields } = Invoice.fields

const InvoiceColumns = Schema.Struct({
  ...rowFields(invoiceFields),
  timingMode: Schema.Literals(["immediate", "due_date"]),
  expiresAfterMinutes: NullableNumber,
  dueAfterDays: NullableNumber,
  gracePeriodDays: NullableNumber,
  dueAt: NullableDateColumn,
  payableUntilAt: DateColumn
})
type InvoiceColumns = typeof InvoiceColumns.Type

const timingOf = ({ timingMode, expiresAfterMinutes, dueAfterDays, gracePeriodDays, dueAt, payableUntilAt }: InvoiceColumns): InvoiceRecord["timing"] =>
  timingMode === "due_date"
    ? { mode: "due_date", dueAfterDays: dueAfterDays ?? 0, gracePeriodDays: gracePeriodDays ?? 0, dueAt: dueAt ?? payableUntilAt, payableUntilAt }
    : { mode: "immediate", expiresAfterMinutes: expiresAfterMinutes ?? 0, payableUntilAt }

/** The invoice of a row that holds the invoice's columns (with or without others beside them). */
export const invoiceOf = (columns: InvoiceColumns): InvoiceRecord => {
  const { timingMode: _mode, expiresAfterMinutes: _e, dueAfterDays: _d, gracePeriodDays: _g, dueAt: _due, payableUntilAt: _p, ...fields } = columns
  return { ...Struct.pick(fields, INVOICE_KEYS), timing: timingOf(columns) }
}
const INVOICE_KEYS = Object.keys(invoiceFields) as Array<keyof typeof invoiceFields>

/** An `invoices` row. */
export const InvoiceRow = InvoiceColumns.pipe(
  Schema.decodeTo(Schema.toType(Invoice), {
    decode: SchemaGetter.transform(invoiceOf),
    encode: SchemaGetter.transform(({ timing, ...fields }: InvoiceRecord): InvoiceColumns => ({
      ...fields,
      timingMode: timing.mode,
      expiresAfterMinutes: timing.mode === "immediate" ? timing.expiresAfterMinutes : null,
      dueAfterDays: timing.mode === "due_date" ? timing.dueAfterDays : null,
      gracePeriodDays: timing.mode === "due_date" ? timing.gracePeriodDays : null,
      dueAt: timing.mode === "due_date" ? timing.dueAt : null,
      payableUntilAt: timing.payableUntilAt
    }))
  })
)

/** A `payment_options` row (the columns only the repository uses, such as `position`, are not part of the entity). */
export const PaymentOptionRow = rowOf(PaymentOption)

/** A `payments` row. */
export const PaymentRow = rowOf(Payment)

/** A row of the dashboard's invoice list: the invoice's columns its summary shows or computes from, and a summary of its payments. */
export const InvoiceSummaryRow = Schema.Struct({
  ...Struct.pick(InvoiceColumns.fields, [...SUMMARY_SHOWN_FIELDS, "payableUntilAt", "amountMicros", "receivedMicros", "confirmedMicros"]),
  paymentCount: Schema.Number,
  paymentNetworks: Schema.NullOr(Schema.String)
})

/** What evidence needs of the option paid to. */
export const EvidenceOptionRow = PaymentOptionRow.mapFields(
  Struct.pick(["id", "network", "assetCode", "decimals", "quotedAtomic", "destinationAddress", "requiredConfirmations", "railType"])
)
export type EvidenceOption = typeof EvidenceOptionRow.Type

/** An invoice read (InvoiceReadSql): the invoice's columns with its options and payments as JSON. */
export const InvoicePartsRow = Schema.Struct({
  ...InvoiceColumns.fields,
  optionsJson: Schema.Array(PaymentOptionRow),
  paymentsJson: Schema.Array(PaymentRow)
})
/** An invoice read under its row lock: also the row's version and the statement snapshot's. */
export const InvoiceLockRow = Schema.Struct({ ...InvoicePartsRow.fields, version: Schema.String, snapshotVersion: Schema.String })

export const invoicePartsOf = (row: typeof InvoicePartsRow.Type) => ({
  invoice: invoiceOf(row),
  options: row.optionsJson,
  payments: row.paymentsJson
})

/** An evidence read: the invoice, the option paid to, the payments and the row versions. */
export const EvidenceRow = Schema.Struct({
  ...InvoiceColumns.fields,
  optionJson: EvidenceOptionRow,
  paymentsJson: Schema.Array(PaymentRow),
  version: Schema.String,
  snapshotVersion: Schema.optionalKey(Schema.String)
})

/** Writes encode the entity through its row schema; an entity that does not encode is a defect: these throw. */
export const encodeInvoiceRow = Schema.encodeSync(InvoiceRow)
export const encodeOptionRow = Schema.encodeSync(PaymentOptionRow)
export const encodePaymentRow = Schema.encodeSync(PaymentRow)

/** A row schema's fields as SQL sees them: the column, its camelCase key, and whether it is an exact integer. */
export interface RowColumn {
  readonly column: string
  readonly key: string
  readonly exact: boolean
}
const columnsOf = (fields: Readonly<Record<string, Schema.Top>>): ReadonlyArray<RowColumn> =>
  Object.entries(fields).map(([key, field]) => ({ column: Str.camelToSnake(key), key, exact: isBigintColumn(field) }))

export const INVOICE_ROW_COLUMNS = columnsOf(InvoiceColumns.fields)
export const OPTION_ROW_COLUMNS = columnsOf(PaymentOptionRow.fields)
export const PAYMENT_ROW_COLUMNS = columnsOf(PaymentRow.fields)
export const SUMMARY_ROW_COLUMNS = columnsOf(InvoiceSummaryRow.fields)
export const EVIDENCE_OPTION_ROW_COLUMNS = columnsOf(EvidenceOptionRow.fields)
