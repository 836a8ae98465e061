import { Schema } from "effect"
import { INVOICE_STATUSES } from "../domain/Statuses.ts"

const Timestamp = Schema.String.annotate({ format: "date-time" })
const NullableTimestamp = Schema.NullOr(Timestamp)
const NullableString = Schema.NullOr(Schema.String)

export const InvoiceStatus = Schema.Literals(INVOICE_STATUSES)
export const PaymentCoverage = Schema.Literals(["no_payment", "partial_payment", "exact_payment", "overpayment"])

export const PaymentSummary = Schema.Struct({
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  remainingAmountUsd: Schema.Number,
  overpaymentAmountUsd: Schema.Number
})

export const PaymentTiming = Schema.Union([
  Schema.Struct({ mode: Schema.Literal("immediate"), expiresAfterMinutes: Schema.Number, payableUntilAt: Timestamp }),
  Schema.Struct({
    mode: Schema.Literal("due_date"),
    dueAfterDays: Schema.Number,
    gracePeriodDays: Schema.Number,
    dueAt: Timestamp,
    payableUntilAt: Timestamp
  })
])

export const PaymentOption = Schema.Struct({
  id: Schema.String,
  railType: Schema.Literals(["wallet_contract", "address_transfer"]),
  assetCode: Schema.String,
  network: Schema.String,
  tokenContract: NullableString,
  quotedAmount: Schema.Number,
  quoteRate: Schema.Number,
  destinationAddress: NullableString,
  paymentUri: NullableString,
  qrCode: NullableString.annotate({ description: "SVG QR code of paymentUri" }),
  status: Schema.Literals(["active", "inactive"]).annotate({
    description: "`active` while the invoice can be paid (awaiting_payment, partially_paid, payment_detected); `inactive` once it is expired, voided, confirmed or paid_out_of_band."
  }),
  isDefault: Schema.Boolean,
  optionPayload: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown))
})

export const Payment = Schema.Struct({
  id: Schema.String,
  paymentOptionId: Schema.String,
  assetCode: Schema.String,
  network: Schema.String,
  destinationAddress: NullableString,
  transactionHash: NullableString,
  amountReceived: Schema.Number,
  observedTotalAmount: Schema.Number,
  confirmations: Schema.Number,
  observedAt: Timestamp,
  confirmedAt: NullableTimestamp,
  invalidatedAt: NullableTimestamp,
  invalidationReason: NullableString
})

const ExceptionFields = {
  exceptionType: Schema.NullOr(Schema.Literals(["late_payment", "partial_payment"])),
  exceptionStatus: Schema.NullOr(Schema.Literals(["open", "closed"])),
  exceptionAction: Schema.NullOr(Schema.Literals(["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"]))
}

const PublicInvoiceFields = {
  id: Schema.String,
  paymentUrl: Schema.String,
  amountUsd: Schema.Number,
  status: InvoiceStatus,
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  confirmations: Schema.Number,
  productName: NullableString,
  issuedBy: NullableString,
  billTo: NullableString,
  redirectUrl: NullableString,
  lastTransactionHash: NullableString,
  paymentSummary: PaymentSummary,
  paymentTiming: PaymentTiming,
  paymentOptions: Schema.Array(PaymentOption),
  defaultPaymentOptionId: NullableString,
  lastPaymentOptionId: NullableString,
  paymentDetectedAt: NullableTimestamp,
  confirmedAt: NullableTimestamp,
  paidOutOfBandAt: NullableTimestamp,
  ...ExceptionFields,
  exceptionClosedAt: NullableTimestamp,
  createdAt: Timestamp,
  lastPaymentObservedAt: NullableTimestamp
}

/** The merchant-facing Invoice. `payments` is absent from the create response only. */
export const Invoice = Schema.Struct({
  ...PublicInvoiceFields,
  merchantReference: NullableString,
  customerId: NullableString,
  customerEmail: NullableString,
  metadata: Schema.NullOr(Schema.Record(Schema.String, Schema.Unknown)),
  payments: Schema.optionalKey(Schema.Array(Payment)),
  paidOutOfBandNote: NullableString,
  exceptionNote: NullableString
}).annotate({ identifier: "Invoice" })

/** The payer-facing Invoice: no merchant-only fields and no reconciliation notes. */
export const PublicInvoice = Schema.Struct({
  ...PublicInvoiceFields,
  payments: Schema.Array(Payment)
}).annotate({ identifier: "PublicInvoice" })

const StatusFields = {
  status: InvoiceStatus,
  paymentCoverage: PaymentCoverage,
  receivedAmountUsd: Schema.Number,
  confirmedAmountUsd: Schema.Number,
  confirmations: Schema.Number,
  paymentDetectedAt: NullableTimestamp,
  confirmedAt: NullableTimestamp,
  paidOutOfBandAt: NullableTimestamp,
  paymentTiming: PaymentTiming,
  paymentSummary: PaymentSummary,
  paymentOptions: Schema.Array(PaymentOption),
  defaultPaymentOptionId: NullableString,
  lastPaymentOptionId: NullableString,
  payments: Schema.Array(Payment),
  lastPaymentObservedAt: NullableTimestamp
}

export const InvoiceStatusPayload = Schema.Struct({ ...StatusFields, paidOutOfBandNote: NullableString })
  .annotate({ identifier: "InvoiceStatus" })
/** The merchant status shape; the note is always null here (notes are never public). */
export const PublicInvoiceStatusPayload = Schema.Struct({
  ...StatusFields,
  paidOutOfBandNote: Schema.Null.annotate({ description: "Always null: reconciliation notes are never public." })
}).annotate({ identifier: "PublicInvoiceStatus" })

/** An unsigned Solana Pay transfer for the payer's wallet to sign (POST prepare-solana-wallet-payment). */
export const SolanaWalletPayment = Schema.Struct({
  transaction: Schema.String.annotate({
    description: "Base64 of an unsigned legacy mainnet transaction, fee payer = the payer: idempotent creation of the merchant's associated token account, the memo, then transferChecked of the remaining amount carrying the option's reference"
  }),
  blockhash: Schema.String,
  lastValidBlockHeight: Schema.Number,
  paymentOptionId: Schema.String,
  amountAtomic: Schema.String.annotate({ description: "Amount of the transfer in the mint's smallest units (what remains due)" })
}).annotate({ identifier: "SolanaWalletPayment" })
