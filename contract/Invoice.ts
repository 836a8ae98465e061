/**
 * The invoice's entities: Invoice, PaymentOption, Payment, each declared once as a Schema.Struct.
 * Pattern (details in Model.ts): rows are `rowOf(Entity)` (db/Columns.ts), views are picks of the
 * entity plus computed fields, response schemas are `jsonOf(view)` or built from the same picks,
 * fields set after creation are `later(schema, initial)` and creations use `Entity.make`.
 */
import { Schema } from "effect"
import { InvoiceId, MerchantId, PaymentId, PaymentOptionId } from "./Ids.ts"
import { changing, changingFields, later, maker } from "./Model.ts"
import { Micros } from "./Money.ts"
import { NullableDate } from "./Timestamps.ts"
import { ExceptionCloseAction, ExceptionStatus, ExceptionType, InvoiceStatus, WebhookEventName } from "./Statuses.ts"

export const RailType = Schema.Literals(["wallet_contract", "address_transfer"])
export type RailType = typeof RailType.Type

const NullableString = Schema.NullOr(Schema.String)
export const JsonObject = Schema.Record(Schema.String, Schema.Unknown)

/** The payment timing resolved against the creation time (see Timing.ts). */
export const ResolvedTiming = Schema.Union([
  Schema.Struct({ mode: Schema.Literal("immediate"), expiresAfterMinutes: Schema.Number, payableUntilAt: Schema.Date }),
  Schema.Struct({
    mode: Schema.Literal("due_date"),
    dueAfterDays: Schema.Number,
    gracePeriodDays: Schema.Number,
    dueAt: Schema.Date,
    payableUntilAt: Schema.Date
  })
])

/**
 * The invoice, declared once (the pattern: domain/Model.ts); everything else is derived from it:
 * its row codec (invoices/InvoiceRows.ts) and the SQL select lists (invoices/InvoiceReadSql.ts);
 * its views and response schemas (InvoiceViews.ts, InvoiceResponses.ts), each naming the fields
 * it shows in one pick (`*_SHOWN_FIELDS`, `InvoiceSummaryView`) and declaring only its computed
 * fields; the dashboard list and its CSV export (InvoiceSummaryView); the browser's types (the
 * API's response types). `later`/`changing` fields are what the lifecycle changes: the columns a
 * save writes (INVOICE_STATE_FIELDS). A new field is one line here, one migration, and its name in
 * the pick of each view that shows it. The field order is the key order of the JSON answers.
 */
export const Invoice = Schema.Struct({
  id: InvoiceId,
  merchantId: MerchantId,
  amountMicros: Micros,
  status: changing(InvoiceStatus),
  timing: ResolvedTiming,
  productName: NullableString,
  issuedBy: NullableString,
  billTo: NullableString,
  redirectUrl: NullableString,
  merchantReference: NullableString,
  customerId: NullableString,
  customerEmail: NullableString,
  metadata: Schema.NullOr(JsonObject),
  defaultPaymentOptionId: Schema.NullOr(PaymentOptionId),
  lastPaymentOptionId: later(Schema.NullOr(PaymentOptionId), null),
  lastTransactionHash: later(NullableString, null),
  receivedMicros: later(Micros, Micros.make(0n)),
  confirmedMicros: later(Micros, Micros.make(0n)),
  /** The smallest confirmation count among the payments counted toward the invoice. */
  confirmations: later(Schema.Number, 0),
  paymentDetectedAt: later(NullableDate, null),
  confirmedAt: later(NullableDate, null),
  paidOutOfBandAt: later(NullableDate, null),
  paidOutOfBandNote: later(NullableString, null),
  voidedAt: later(NullableDate, null),
  exceptionType: later(Schema.NullOr(ExceptionType), null),
  exceptionStatus: later(Schema.NullOr(ExceptionStatus), null),
  exceptionAction: later(Schema.NullOr(ExceptionCloseAction), null),
  exceptionNote: later(NullableString, null),
  exceptionClosedAt: later(NullableDate, null),
  createdAt: Schema.Date,
  lastPaymentObservedAt: later(NullableDate, null),
  /** false for a test invoice (created with a test API key): it never mixes with live ones. */
  livemode: Schema.Boolean
})
/** The fields the lifecycle changes (`changing`, `later`), in declaration order. */
export const INVOICE_STATE_FIELDS = changingFields(Invoice) as Array<Exclude<keyof typeof Invoice.fields, "timing">>
export type InvoiceRecord = typeof Invoice.Type
/** A new invoice: `Invoice.make` without its parse (the create path). */
export const newInvoice = maker(Invoice)

/** One way to pay an invoice: an asset on a network, its quote and where to send it. */
export const PaymentOption = Schema.Struct({
  id: PaymentOptionId,
  invoiceId: InvoiceId,
  railType: RailType,
  assetCode: Schema.String,
  network: Schema.String,
  tokenContract: NullableString,
  decimals: Schema.Number,
  quotedAtomic: Schema.BigInt,
  /** The USD rate of the quote, as decimal text (exact). */
  quoteRate: Schema.String,
  destinationAddress: NullableString,
  paymentUri: NullableString,
  qrCode: NullableString,
  status: Schema.Literal("active"),
  isDefault: Schema.Boolean,
  optionPayload: Schema.NullOr(JsonObject),
  requiredConfirmations: Schema.Number
})
export type PaymentOptionRecord = typeof PaymentOption.Type

/** A transaction output paid to an option, as the chain watchers observed it. */
export const Payment = Schema.Struct({
  id: PaymentId,
  invoiceId: InvoiceId,
  paymentOptionId: PaymentOptionId,
  assetCode: Schema.String,
  network: Schema.String,
  destinationAddress: NullableString,
  transactionHash: NullableString,
  outputIndex: Schema.Number,
  decimals: Schema.Number,
  amountAtomic: Schema.BigInt,
  observedTotalAtomic: Schema.BigInt,
  usdMicros: Micros,
  /** The option's quote the payment is valued against (with the other payments of its option). */
  quotedAtomic: Schema.BigInt,
  confirmations: Schema.Number,
  late: Schema.Boolean,
  observedAt: Schema.Date,
  confirmedAt: NullableDate,
  invalidatedAt: NullableDate,
  invalidationReason: NullableString
})
export type PaymentRecord = typeof Payment.Type

/** A webhook event written to the outbox in the same transaction as the change it reports. */
export const OutboxEvent = Schema.Struct({ invoiceId: InvoiceId, merchantId: MerchantId, event: WebhookEventName })
export type OutboxEvent = typeof OutboxEvent.Type

/** An invoice with its payment options and its payments, as read and written together. */
export interface InvoiceParts {
  readonly invoice: InvoiceRecord
  readonly options: ReadonlyArray<PaymentOptionRecord>
  readonly payments: ReadonlyArray<PaymentRecord>
}
