import type { InvoiceParts, InvoiceRecord, PaymentOptionRecord, PaymentRecord } from "./Invoice.ts"
import { summarize } from "./Coverage.ts"
import { isPayableNow } from "./Payable.ts"
import { formatAtomic, microsToNumber } from "./Money.ts"
import type { ResolvedTiming } from "./Timing.ts"
import {
  INVOICE_MERCHANT_FIELDS,
  INVOICE_SHOWN_FIELDS,
  OPTION_SHOWN_FIELDS,
  PAYMENT_SHOWN_FIELDS,
  STATUS_SHOWN_FIELDS,
  WEBHOOK_SHOWN_FIELDS
} from "../../contract/InvoiceFields.ts"

/** An entity value as JSON shows it: timestamps as ISO 8601 text, everything else as it is. */
export type Wire<A> = { readonly [K in keyof A]: A[K] extends Date ? string : A[K] extends Date | null ? string | null : A[K] }

/** The fields of `value` named in `keys`, as JSON shows them (the refunds views use it too). */
export const shown = <A extends object, const K extends ReadonlyArray<keyof A>>(value: A, keys: K): Wire<Pick<A, K[number]>> => {
  const out: Record<string, unknown> = {}
  for (const key of keys) {
    const field = value[key]
    out[key as string] = field instanceof Date ? field.toISOString() : field
  }
  return out as Wire<Pick<A, K[number]>>
}

export { INVOICE_MERCHANT_FIELDS, INVOICE_SHOWN_FIELDS, OPTION_SHOWN_FIELDS, PAYMENT_SHOWN_FIELDS, STATUS_SHOWN_FIELDS, WEBHOOK_SHOWN_FIELDS }

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

/** `active` exactly when the invoice can be paid now (the one rule, domain/Payable.ts): what Solana prepare would prepare. */
export const optionStatus = (invoice: Pick<InvoiceRecord, "status" | "timing">, now: Date): "active" | "inactive" => isPayableNow(invoice, now) ? "active" : "inactive"

export const optionView = (option: PaymentOptionRecord, invoice: Pick<InvoiceRecord, "status" | "timing">, now: Date) => ({
  ...shown(option, OPTION_SHOWN_FIELDS),
  quotedAmount: Number(formatAtomic(option.quotedAtomic, option.decimals)),
  quoteRate: Number(option.quoteRate),
  status: optionStatus(invoice, now)
})

export const paymentView = (payment: PaymentRecord) => ({
  ...shown(payment, PAYMENT_SHOWN_FIELDS),
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
    ...shown(invoice, INVOICE_SHOWN_FIELDS),
    paymentUrl: `${publicBaseUrl}/pay/${invoice.id}`,
    amountUsd: microsToNumber(invoice.amountMicros),
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    paymentSummary: summary,
    paymentTiming: timingView(invoice.timing),
    paymentOptions: options.map((option) => optionView(option, invoice, now))
  }
}

/** The merchant-facing Invoice object; `payments` only when given (absent on create). */
export const merchantInvoiceView = (parts: ShownParts, publicBaseUrl: string, now: Date) => ({
  ...payerView(parts, publicBaseUrl, now),
  ...shown(parts.invoice, INVOICE_MERCHANT_FIELDS),
  ...(parts.payments === undefined ? {} : { payments: parts.payments.map(paymentView) })
})

/** The payer-facing Invoice. */
export const publicInvoiceView = (parts: ShownParts, publicBaseUrl: string, now: Date) => ({
  ...payerView(parts, publicBaseUrl, now),
  payments: (parts.payments ?? []).map(paymentView)
})

/** The polling payload of GET .../status. */
export const statusView = ({ invoice, options, payments }: ShownParts, now: Date) => {
  const summary = summaryView(invoice)
  return {
    ...shown(invoice, STATUS_SHOWN_FIELDS),
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    paymentTiming: timingView(invoice.timing),
    paymentSummary: summary,
    paymentOptions: options.map((option) => optionView(option, invoice, now)),
    payments: (payments ?? []).map(paymentView)
  }
}

/** The merchant status shape, with the note present as null: never its text. */
export const publicStatusView = (parts: ShownParts, now: Date) => ({ ...statusView(parts, now), paidOutOfBandNote: null })

/** The `invoice` object of a webhook payload: the spec's field list, latest state at send time. */
export const webhookInvoiceView = (invoice: InvoiceRecord) => {
  const summary = summaryView(invoice)
  return {
    ...shown(invoice, WEBHOOK_SHOWN_FIELDS),
    amountUsd: microsToNumber(invoice.amountMicros),
    paymentCoverage: summary.paymentCoverage,
    receivedAmountUsd: summary.receivedAmountUsd,
    confirmedAmountUsd: summary.confirmedAmountUsd,
    paymentSummary: summary
  }
}
