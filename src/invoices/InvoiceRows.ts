import type { InvoiceRecord, PaymentOptionRecord, PaymentRecord } from "../domain/Invoice.ts"
import type { ResolvedTiming } from "../domain/Timing.ts"
import { toBigInt, toDate, toDateOrNull, toJsonObject, toNumber, toStringOrNull } from "../db/Values.ts"

type Row = Record<string, unknown>

const timingOf = (row: Row): ResolvedTiming =>
  row.timingMode === "due_date"
    ? {
      mode: "due_date",
      dueAfterDays: toNumber(row.dueAfterDays),
      gracePeriodDays: toNumber(row.gracePeriodDays),
      dueAt: toDate(row.dueAt),
      payableUntilAt: toDate(row.payableUntilAt)
    }
    : { mode: "immediate", expiresAfterMinutes: toNumber(row.expiresAfterMinutes), payableUntilAt: toDate(row.payableUntilAt) }

export const invoiceFromRow = (row: Row): InvoiceRecord => ({
  id: String(row.id),
  merchantId: String(row.merchantId),
  amountMicros: toBigInt(row.amountMicros),
  status: row.status as InvoiceRecord["status"],
  timing: timingOf(row),
  productName: toStringOrNull(row.productName),
  issuedBy: toStringOrNull(row.issuedBy),
  billTo: toStringOrNull(row.billTo),
  redirectUrl: toStringOrNull(row.redirectUrl),
  merchantReference: toStringOrNull(row.merchantReference),
  customerId: toStringOrNull(row.customerId),
  customerEmail: toStringOrNull(row.customerEmail),
  metadata: toJsonObject(row.metadata),
  defaultPaymentOptionId: toStringOrNull(row.defaultPaymentOptionId),
  lastPaymentOptionId: toStringOrNull(row.lastPaymentOptionId),
  lastTransactionHash: toStringOrNull(row.lastTransactionHash),
  receivedMicros: toBigInt(row.receivedMicros),
  confirmedMicros: toBigInt(row.confirmedMicros),
  confirmations: toNumber(row.confirmations),
  paymentDetectedAt: toDateOrNull(row.paymentDetectedAt),
  confirmedAt: toDateOrNull(row.confirmedAt),
  paidOutOfBandAt: toDateOrNull(row.paidOutOfBandAt),
  paidOutOfBandNote: toStringOrNull(row.paidOutOfBandNote),
  voidedAt: toDateOrNull(row.voidedAt),
  exceptionType: (row.exceptionType ?? null) as InvoiceRecord["exceptionType"],
  exceptionStatus: (row.exceptionStatus ?? null) as InvoiceRecord["exceptionStatus"],
  exceptionAction: (row.exceptionAction ?? null) as InvoiceRecord["exceptionAction"],
  exceptionNote: toStringOrNull(row.exceptionNote),
  exceptionClosedAt: toDateOrNull(row.exceptionClosedAt),
  createdAt: toDate(row.createdAt),
  lastPaymentObservedAt: toDateOrNull(row.lastPaymentObservedAt)
})

export const optionFromRow = (row: Row): PaymentOptionRecord => ({
  id: String(row.id),
  invoiceId: String(row.invoiceId),
  railType: row.railType as PaymentOptionRecord["railType"],
  assetCode: String(row.assetCode),
  network: String(row.network),
  tokenContract: toStringOrNull(row.tokenContract),
  decimals: toNumber(row.decimals),
  quotedAtomic: toBigInt(row.quotedAtomic),
  quoteRate: String(row.quoteRate),
  destinationAddress: toStringOrNull(row.destinationAddress),
  paymentUri: toStringOrNull(row.paymentUri),
  qrCode: toStringOrNull(row.qrCode),
  status: "active",
  isDefault: row.isDefault === true,
  optionPayload: toJsonObject(row.optionPayload),
  requiredConfirmations: toNumber(row.requiredConfirmations)
})

export const paymentFromRow = (row: Row): PaymentRecord => ({
  id: String(row.id),
  invoiceId: String(row.invoiceId),
  paymentOptionId: String(row.paymentOptionId),
  assetCode: String(row.assetCode),
  network: String(row.network),
  destinationAddress: toStringOrNull(row.destinationAddress),
  transactionHash: toStringOrNull(row.transactionHash),
  outputIndex: toNumber(row.outputIndex),
  decimals: toNumber(row.decimals),
  amountAtomic: toBigInt(row.amountAtomic),
  observedTotalAtomic: toBigInt(row.observedTotalAtomic),
  usdMicros: toBigInt(row.usdMicros),
  quotedAtomic: toBigInt(row.quotedAtomic),
  confirmations: toNumber(row.confirmations),
  late: row.late === true,
  observedAt: toDate(row.observedAt),
  confirmedAt: toDateOrNull(row.confirmedAt),
  invalidatedAt: toDateOrNull(row.invalidatedAt),
  invalidationReason: toStringOrNull(row.invalidationReason)
})

/** Column values of an invoice for INSERT/UPDATE (snake_case keys, exact money as text). */
export const invoiceColumns = (invoice: InvoiceRecord) => ({
  id: invoice.id,
  merchant_id: invoice.merchantId,
  amount_micros: invoice.amountMicros.toString(),
  status: invoice.status,
  timing_mode: invoice.timing.mode,
  expires_after_minutes: invoice.timing.mode === "immediate" ? invoice.timing.expiresAfterMinutes : null,
  due_after_days: invoice.timing.mode === "due_date" ? invoice.timing.dueAfterDays : null,
  grace_period_days: invoice.timing.mode === "due_date" ? invoice.timing.gracePeriodDays : null,
  due_at: invoice.timing.mode === "due_date" ? invoice.timing.dueAt : null,
  payable_until_at: invoice.timing.payableUntilAt,
  product_name: invoice.productName,
  issued_by: invoice.issuedBy,
  bill_to: invoice.billTo,
  redirect_url: invoice.redirectUrl,
  merchant_reference: invoice.merchantReference,
  customer_id: invoice.customerId,
  customer_email: invoice.customerEmail,
  metadata: invoice.metadata === null ? null : JSON.stringify(invoice.metadata),
  default_payment_option_id: invoice.defaultPaymentOptionId,
  last_payment_option_id: invoice.lastPaymentOptionId,
  last_transaction_hash: invoice.lastTransactionHash,
  received_micros: invoice.receivedMicros.toString(),
  confirmed_micros: invoice.confirmedMicros.toString(),
  confirmations: invoice.confirmations,
  payment_detected_at: invoice.paymentDetectedAt,
  confirmed_at: invoice.confirmedAt,
  paid_out_of_band_at: invoice.paidOutOfBandAt,
  paid_out_of_band_note: invoice.paidOutOfBandNote,
  voided_at: invoice.voidedAt,
  exception_type: invoice.exceptionType,
  exception_status: invoice.exceptionStatus,
  exception_action: invoice.exceptionAction,
  exception_note: invoice.exceptionNote,
  exception_closed_at: invoice.exceptionClosedAt,
  created_at: invoice.createdAt,
  last_payment_observed_at: invoice.lastPaymentObservedAt
})
