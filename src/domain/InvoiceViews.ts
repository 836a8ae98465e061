import type { InvoiceStatus } from "./Statuses.ts"
import type { InvoiceRecord, PaymentOptionRecord, PaymentRecord } from "./Invoice.ts"
import { summarize } from "./Coverage.ts"
import { formatAtomic, microsToNumber } from "./Money.ts"
import type { ResolvedTiming } from "./Timing.ts"

const iso = (date: Date | null): string | null => (date === null ? null : date.toISOString())

export const timingView = (timing: ResolvedTiming) =>
  timing.mode === "immediate"
    ? { mode: timing.mode, expiresAfterMinutes: timing.expiresAfterMinutes, payableUntilAt: timing.payableUntilAt.toISOString() }
    : {
      mode: timing.mode,
      dueAfterDays: timing.dueAfterDays,
      gracePeriodDays: timing.gracePeriodDays,
      dueAt: timing.dueAt.toISOString(),
      payableUntilAt: timing.payableUntilAt.toISOString()
    }

export const summaryView = (invoice: InvoiceRecord) => {
  const summary = summarize(invoice.amountMicros, invoice.receivedMicros, invoice.confirmedMicros)
  return {
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: microsToNumber(summary.receivedMicros),
    confirmedAmountUsd: microsToNumber(summary.confirmedMicros),
    remainingAmountUsd: microsToNumber(summary.remainingMicros),
    overpaymentAmountUsd: microsToNumber(summary.overpaymentMicros)
  }
}

/** Statuses in which an invoice can still be paid; its options are `active` only then. */
const PAYABLE_STATUSES: ReadonlySet<InvoiceStatus> = new Set(["awaiting_payment", "partially_paid", "payment_detected"])

/** `active` while the invoice can be paid, `inactive` once it is expired, voided, confirmed or paid out of band. */
export const optionStatus = (invoiceStatus: InvoiceStatus): "active" | "inactive" =>
  PAYABLE_STATUSES.has(invoiceStatus) ? "active" : "inactive"

export const optionView = (option: PaymentOptionRecord, invoiceStatus: InvoiceStatus) => ({
  id: option.id,
  railType: option.railType,
  assetCode: option.assetCode,
  network: option.network,
  tokenContract: option.tokenContract,
  quotedAmount: Number(formatAtomic(option.quotedAtomic, option.decimals)),
  quoteRate: Number(option.quoteRate),
  destinationAddress: option.destinationAddress,
  paymentUri: option.paymentUri,
  qrCode: option.qrCode,
  status: optionStatus(invoiceStatus),
  isDefault: option.isDefault,
  optionPayload: option.optionPayload
})

export const paymentView = (payment: PaymentRecord) => ({
  id: payment.id,
  paymentOptionId: payment.paymentOptionId,
  assetCode: payment.assetCode,
  network: payment.network,
  destinationAddress: payment.destinationAddress,
  transactionHash: payment.transactionHash,
  amountReceived: Number(formatAtomic(payment.amountAtomic, payment.decimals)),
  observedTotalAmount: Number(formatAtomic(payment.observedTotalAtomic, payment.decimals)),
  confirmations: payment.confirmations,
  observedAt: payment.observedAt.toISOString(),
  confirmedAt: iso(payment.confirmedAt),
  invalidatedAt: iso(payment.invalidatedAt),
  invalidationReason: payment.invalidationReason
})

export interface InvoiceParts {
  readonly invoice: InvoiceRecord
  readonly options: ReadonlyArray<PaymentOptionRecord>
  readonly payments?: ReadonlyArray<PaymentRecord> | undefined
}

/** The merchant-facing Invoice object; `payments` only when given (absent on create). */
export const merchantInvoiceView = ({ invoice, options, payments }: InvoiceParts, publicBaseUrl: string) => {
  const summary = summaryView(invoice)
  return {
    id: invoice.id,
    paymentUrl: `${publicBaseUrl}/pay/${invoice.id}`,
    amountUsd: microsToNumber(invoice.amountMicros),
    status: invoice.status,
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    confirmations: invoice.confirmations,
    productName: invoice.productName,
    issuedBy: invoice.issuedBy,
    billTo: invoice.billTo,
    redirectUrl: invoice.redirectUrl,
    lastTransactionHash: invoice.lastTransactionHash,
    merchantReference: invoice.merchantReference,
    customerId: invoice.customerId,
    customerEmail: invoice.customerEmail,
    metadata: invoice.metadata,
    paymentSummary: summary,
    paymentTiming: timingView(invoice.timing),
    paymentOptions: options.map((option) => optionView(option, invoice.status)),
    defaultPaymentOptionId: invoice.defaultPaymentOptionId,
    lastPaymentOptionId: invoice.lastPaymentOptionId,
    ...(payments === undefined ? {} : { payments: payments.map(paymentView) }),
    paymentDetectedAt: iso(invoice.paymentDetectedAt),
    confirmedAt: iso(invoice.confirmedAt),
    paidOutOfBandAt: iso(invoice.paidOutOfBandAt),
    paidOutOfBandNote: invoice.paidOutOfBandNote,
    exceptionType: invoice.exceptionType,
    exceptionStatus: invoice.exceptionStatus,
    exceptionAction: invoice.exceptionAction,
    exceptionNote: invoice.exceptionNote,
    exceptionClosedAt: iso(invoice.exceptionClosedAt),
    createdAt: invoice.createdAt.toISOString(),
    lastPaymentObservedAt: iso(invoice.lastPaymentObservedAt)
  }
}

/** The payer-facing Invoice: no merchant-only fields, never a reconciliation note. */
export const publicInvoiceView = (parts: InvoiceParts, publicBaseUrl: string) => {
  const {
    customerEmail: _customerEmail,
    customerId: _customerId,
    exceptionNote: _exceptionNote,
    merchantReference: _merchantReference,
    metadata: _metadata,
    paidOutOfBandNote: _paidOutOfBandNote,
    payments,
    ...rest
  } = merchantInvoiceView({ ...parts, payments: parts.payments ?? [] }, publicBaseUrl)
  return { ...rest, payments: payments ?? [] }
}

/** The polling payload of GET .../status. */
export const statusView = ({ invoice, options, payments }: InvoiceParts) => {
  const summary = summaryView(invoice)
  return {
    status: invoice.status,
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    confirmations: invoice.confirmations,
    paymentDetectedAt: iso(invoice.paymentDetectedAt),
    confirmedAt: iso(invoice.confirmedAt),
    paidOutOfBandAt: iso(invoice.paidOutOfBandAt),
    paidOutOfBandNote: invoice.paidOutOfBandNote,
    paymentTiming: timingView(invoice.timing),
    paymentSummary: summary,
    paymentOptions: options.map((option) => optionView(option, invoice.status)),
    defaultPaymentOptionId: invoice.defaultPaymentOptionId,
    lastPaymentOptionId: invoice.lastPaymentOptionId,
    payments: (payments ?? []).map(paymentView),
    lastPaymentObservedAt: iso(invoice.lastPaymentObservedAt)
  }
}

/** The merchant status shape, with the note present as null: never its text. */
export const publicStatusView = (parts: InvoiceParts) => ({ ...statusView(parts), paidOutOfBandNote: null })

/** The `invoice` object of a webhook payload: the spec's field list, latest state at send time. */
export const webhookInvoiceView = (invoice: InvoiceRecord) => {
  const summary = summaryView(invoice)
  return {
    id: invoice.id,
    amountUsd: microsToNumber(invoice.amountMicros),
    status: invoice.status,
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    confirmations: invoice.confirmations,
    paymentDetectedAt: iso(invoice.paymentDetectedAt),
    confirmedAt: iso(invoice.confirmedAt),
    paidOutOfBandAt: iso(invoice.paidOutOfBandAt),
    paidOutOfBandNote: invoice.paidOutOfBandNote,
    defaultPaymentOptionId: invoice.defaultPaymentOptionId,
    lastPaymentOptionId: invoice.lastPaymentOptionId,
    paymentSummary: summary,
    lastTransactionHash: invoice.lastTransactionHash,
    exceptionType: invoice.exceptionType,
    exceptionStatus: invoice.exceptionStatus,
    exceptionAction: invoice.exceptionAction,
    exceptionNote: invoice.exceptionNote,
    exceptionClosedAt: iso(invoice.exceptionClosedAt),
    metadata: invoice.metadata
  }
}
