import { Schema } from "effect"
import { InvoiceId, MerchantId, PaymentId, PaymentOptionId } from "./Ids.ts"
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
 * The invoice, declared once: its row schema (invoices/InvoiceRows.ts) and its merchant, public,
 * status and webhook views (InvoiceViews.ts, InvoiceResponses.ts) are derived from these fields.
 */
export const Invoice = Schema.Struct({
  id: InvoiceId,
  merchantId: MerchantId,
  amountMicros: Micros,
  status: InvoiceStatus,
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
  lastPaymentOptionId: Schema.NullOr(PaymentOptionId),
  lastTransactionHash: NullableString,
  receivedMicros: Micros,
  confirmedMicros: Micros,
  /** The smallest confirmation count among the payments counted toward the invoice. */
  confirmations: Schema.Number,
  paymentDetectedAt: NullableDate,
  confirmedAt: NullableDate,
  paidOutOfBandAt: NullableDate,
  paidOutOfBandNote: NullableString,
  voidedAt: NullableDate,
  exceptionType: Schema.NullOr(ExceptionType),
  exceptionStatus: Schema.NullOr(ExceptionStatus),
  exceptionAction: Schema.NullOr(ExceptionCloseAction),
  exceptionNote: NullableString,
  exceptionClosedAt: NullableDate,
  createdAt: Schema.Date,
  lastPaymentObservedAt: NullableDate
})
export type InvoiceRecord = typeof Invoice.Type

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
