import { Schema, Struct } from "effect"
import { PaymentCoverage } from "./Statuses.ts"
import { Invoice, Payment, PaymentOption, ResolvedTiming } from "./Invoice.ts"
import { jsonFields } from "./Model.ts"
import { Timestamp } from "./Timestamps.ts"
import { INVOICE_MERCHANT_FIELDS, INVOICE_SHOWN_FIELDS, OPTION_SHOWN_FIELDS, PAYMENT_SHOWN_FIELDS, STATUS_SHOWN_FIELDS, WEBHOOK_SHOWN_FIELDS } from "./InvoiceFields.ts"

/**
 * Response schemas of the invoice endpoints, derived from the entities (domain/Invoice.ts) by
 * picking the fields each view shows; only the computed fields are declared here. A view
 * (domain/InvoiceViews.ts) is a value of its schema's type, timestamps as Dates; the endpoint's
 * schema (or, outside an endpoint, `Schema.encodeSync` of it) writes them as ISO 8601 text.
 */

const InvoiceJson = jsonFields(Invoice.fields)

export const PaymentSummary = Schema.Struct({
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  remainingAmountUsd: Schema.Number,
  overpaymentAmountUsd: Schema.Number
})

export const PaymentTiming = Schema.Union(ResolvedTiming.members.map((member) => Schema.Struct(jsonFields(member.fields))))

export const PaymentOptionView = Schema.Struct({
  ...Struct.pick(jsonFields(PaymentOption.fields), OPTION_SHOWN_FIELDS),
  qrCode: PaymentOption.fields.qrCode.annotate({ description: "SVG QR code of paymentUri" }),
  quotedAmount: Schema.Number,
  quoteRate: Schema.Number,
  status: Schema.Literals(["active", "inactive"]).annotate({
    description:
      "`active` while the invoice can be paid now (awaiting_payment or partially_paid, and not after paymentTiming.payableUntilAt, whether or not the invoice is marked expired yet): exactly when a payment sent now counts and Solana prepare answers; `inactive` otherwise (payment_detected, confirmed, paid_out_of_band, expired, voided, or past the deadline)."
  })
})

export type PaymentOptionView = typeof PaymentOptionView.Type

export const PaymentView = Schema.Struct({
  ...Struct.pick(jsonFields(Payment.fields), PAYMENT_SHOWN_FIELDS),
  amountReceived: Schema.Number,
  observedTotalAmount: Schema.Number
})
export type PaymentView = typeof PaymentView.Type

const PayerInvoiceFields = {
  ...Struct.pick(InvoiceJson, INVOICE_SHOWN_FIELDS),
  paymentUrl: Schema.String,
  amountUsd: Schema.Number,
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  paymentSummary: PaymentSummary,
  paymentTiming: PaymentTiming,
  paymentOptions: Schema.Array(PaymentOptionView)
}

/** The merchant-facing Invoice. `payments` is absent from the create response only. */
export const InvoiceView = Schema.Struct({
  ...PayerInvoiceFields,
  ...Struct.pick(InvoiceJson, INVOICE_MERCHANT_FIELDS),
  payments: Schema.optionalKey(Schema.Array(PaymentView))
}).annotate({ identifier: "Invoice" })
export type InvoiceView = typeof InvoiceView.Type

/** The payer-facing Invoice: no merchant-only fields and no reconciliation notes. */
export const PublicInvoiceView = Schema.Struct({
  ...PayerInvoiceFields,
  payments: Schema.Array(PaymentView)
}).annotate({ identifier: "PublicInvoice" })
export type PublicInvoiceView = typeof PublicInvoiceView.Type

const StatusFields = {
  ...Struct.pick(InvoiceJson, STATUS_SHOWN_FIELDS),
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  paymentTiming: PaymentTiming,
  paymentSummary: PaymentSummary,
  paymentOptions: Schema.Array(PaymentOptionView),
  payments: Schema.Array(PaymentView)
}

export const InvoiceStatusView = Schema.Struct(StatusFields).annotate({ identifier: "InvoiceStatus" })
export type InvoiceStatusView = typeof InvoiceStatusView.Type
/** The merchant status shape; the note is always null here (notes are never public). */
export const PublicInvoiceStatusView = Schema.Struct({
  ...StatusFields,
  paidOutOfBandNote: Schema.Null.annotate({ description: "Always null: reconciliation notes are never public." })
}).annotate({ identifier: "PublicInvoiceStatus" })
export type PublicInvoiceStatusView = typeof PublicInvoiceStatusView.Type

/** The fields named in `keys`, in that order (`Struct.pick` keeps the source's order). */
const inOrder = <F extends Readonly<Record<string, Schema.Top>>, const K extends ReadonlyArray<keyof F>>(fields: F, keys: K): Pick<F, K[number]> =>
  Object.fromEntries(keys.map((key) => [key, fields[key]])) as Pick<F, K[number]>

/**
 * The `invoice` of a webhook payload: the spec's field list in the spec's order (the order of the
 * body's keys), the latest state at send time (no payment instructions).
 */
export const WebhookInvoiceView = Schema.Struct({
  ...inOrder(InvoiceJson, WEBHOOK_SHOWN_FIELDS),
  amountUsd: Schema.Number,
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  paymentSummary: PaymentSummary
}).annotate({ identifier: "WebhookInvoice" })
export type WebhookInvoiceView = typeof WebhookInvoiceView.Type

/**
 * One row of the dashboard's invoice list, and its CSV export: the export's columns are these
 * fields in this order (invoices/InvoiceCsv.ts), and the list's database row reads the invoice's
 * fields named here (invoices/InvoiceRows.ts). This is the one place the summary's fields are listed.
 */
export const InvoiceSummaryView = Schema.Struct({
  ...inOrder(InvoiceJson, ["id", "createdAt", "status"]),
  amountUsd: Schema.Number,
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  ...inOrder(InvoiceJson, ["productName", "merchantReference", "customerEmail"]),
  payableUntilAt: Timestamp,
  ...inOrder(InvoiceJson, ["paymentDetectedAt", "confirmedAt", "paidOutOfBandAt", "exceptionType", "exceptionStatus", "exceptionAction", "exceptionClosedAt"]),
  /** Count and networks of the payments, e.g. "2 (arbitrum USDT, base USDC)". */
  paymentsSummary: Schema.String
}).annotate({ identifier: "InvoiceSummary" })
export type InvoiceSummary = typeof InvoiceSummaryView.Type
/** The summary's fields taken from the invoice as they are. */
export const SUMMARY_SHOWN_FIELDS = (Object.keys(InvoiceSummaryView.fields) as Array<keyof InvoiceSummary>).filter((key): key is keyof InvoiceSummary & keyof typeof InvoiceJson =>
  key in InvoiceJson
)

/** An unsigned Solana Pay transfer for the payer's wallet to sign (POST prepare-solana-wallet-payment). */
export const SolanaWalletPayment = Schema.Struct({
  transaction: Schema.String.annotate({
    description:
      "Base64 of an unsigned legacy mainnet transaction, fee payer = the payer: idempotent creation of the merchant's associated token account, the memo, then transferChecked of the remaining amount carrying the option's reference"
  }),
  blockhash: Schema.String,
  lastValidBlockHeight: Schema.Number,
  paymentOptionId: Schema.String,
  amountAtomic: Schema.String.annotate({ description: "Amount of the transfer in the mint's smallest units (what remains due)" })
}).annotate({ identifier: "SolanaWalletPayment" })
