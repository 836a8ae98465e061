import type { InvoiceParts, InvoiceRecord, PaymentOptionRecord, PaymentRecord } from "./Invoice.ts"
import type { InvoiceStatusView, InvoiceView, PaymentOptionView, PaymentView, PublicInvoiceStatusView, PublicInvoiceView, WebhookInvoiceView } from "./InvoiceResponses.ts"
import { summarize } from "./Coverage.ts"
import { isPayableNow } from "./Payable.ts"
import { formatAtomic, microsToNumber } from "./Money.ts"
import {
  INVOICE_MERCHANT_FIELDS,
  INVOICE_SHOWN_FIELDS,
  OPTION_SHOWN_FIELDS,
  PAYMENT_SHOWN_FIELDS,
  STATUS_SHOWN_FIELDS,
  WEBHOOK_SHOWN_FIELDS
} from "../../contract/InvoiceFields.ts"

/**
 * The views: values of their response schemas' types (contract/InvoiceResponses.ts), the stored
 * fields each schema picks taken as they are (timestamps stay Dates) plus the computed ones. The
 * endpoint's schema encodes a view; outside an endpoint (webhook bodies, the status stream) the
 * same schema does, through `Schema.encodeSync`.
 */

/** The fields of `value` named in `keys`, as they are (the refunds views use it too). */
export const picked = <A extends object, const K extends ReadonlyArray<keyof A>>(value: A, keys: K): Pick<A, K[number]> => {
  const out: Partial<Pick<A, K[number]>> = {}
  for (const key of keys) out[key as K[number]] = value[key as K[number]]
  return out as Pick<A, K[number]>
}

export { INVOICE_MERCHANT_FIELDS, INVOICE_SHOWN_FIELDS, OPTION_SHOWN_FIELDS, PAYMENT_SHOWN_FIELDS, STATUS_SHOWN_FIELDS, WEBHOOK_SHOWN_FIELDS }

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

/** `active` exactly when the invoice can be paid now (the one rule, domain/Payable.ts): what Solana prepare would prepare. */
export const optionStatus = (invoice: Pick<InvoiceRecord, "status" | "timing">, now: Date): "active" | "inactive" => isPayableNow(invoice, now) ? "active" : "inactive"

export const optionView = (option: PaymentOptionRecord, invoice: Pick<InvoiceRecord, "status" | "timing">, now: Date): PaymentOptionView => ({
  ...picked(option, OPTION_SHOWN_FIELDS),
  quotedAmount: Number(formatAtomic(option.quotedAtomic, option.decimals)),
  quoteRate: Number(option.quoteRate),
  status: optionStatus(invoice, now)
})

export const paymentView = (payment: PaymentRecord): PaymentView => ({
  ...picked(payment, PAYMENT_SHOWN_FIELDS),
  amountReceived: Number(formatAtomic(payment.amountAtomic, payment.decimals)),
  observedTotalAmount: Number(formatAtomic(payment.observedTotalAtomic, payment.decimals))
})

export type { InvoiceParts }

/** What a view shows of an invoice's parts: the merchant's create answer has no payments yet. */
type ShownParts = Pick<InvoiceParts, "invoice" | "options"> & { readonly payments?: InvoiceParts["payments"] | undefined }

/** What the payer may see of the invoice: no merchant-only field, never a reconciliation note. */
const payerView = ({ invoice, options }: ShownParts, publicBaseUrl: string, now: Date) => {
  const summary = summaryView(invoice)
  return {
    ...picked(invoice, INVOICE_SHOWN_FIELDS),
    paymentUrl: `${publicBaseUrl}/pay/${invoice.id}`,
    amountUsd: microsToNumber(invoice.amountMicros),
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    paymentSummary: summary,
    paymentTiming: invoice.timing,
    paymentOptions: options.map((option) => optionView(option, invoice, now))
  }
}

/** The merchant-facing Invoice object; `payments` only when given (absent on create). */
export const merchantInvoiceView = (parts: ShownParts, publicBaseUrl: string, now: Date): InvoiceView => ({
  ...payerView(parts, publicBaseUrl, now),
  ...picked(parts.invoice, INVOICE_MERCHANT_FIELDS),
  ...(parts.payments === undefined ? {} : { payments: parts.payments.map(paymentView) })
})

/** The payer-facing Invoice. */
export const publicInvoiceView = (parts: ShownParts, publicBaseUrl: string, now: Date): PublicInvoiceView => ({
  ...payerView(parts, publicBaseUrl, now),
  payments: (parts.payments ?? []).map(paymentView)
})

/** The polling payload of GET .../status. */
export const statusView = ({ invoice, options, payments }: ShownParts, now: Date): InvoiceStatusView => {
  const summary = summaryView(invoice)
  return {
    ...picked(invoice, STATUS_SHOWN_FIELDS),
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    paymentTiming: invoice.timing,
    paymentSummary: summary,
    paymentOptions: options.map((option) => optionView(option, invoice, now)),
    payments: (payments ?? []).map(paymentView)
  }
}

/** The merchant status shape, with the note present as null: never its text. */
export const publicStatusView = (parts: ShownParts, now: Date): PublicInvoiceStatusView => ({ ...statusView(parts, now), paidOutOfBandNote: null })

/** The `invoice` object of a webhook payload: the spec's field list, latest state at send time. */
export const webhookInvoiceView = (invoice: InvoiceRecord): WebhookInvoiceView => {
  const summary = summaryView(invoice)
  return {
    ...picked(invoice, WEBHOOK_SHOWN_FIELDS),
    amountUsd: microsToNumber(invoice.amountMicros),
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    paymentSummary: summary
  }
}
