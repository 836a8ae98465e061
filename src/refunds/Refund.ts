import { Schema, Struct } from "effect"
import { InvoiceId, MerchantId, PaymentOptionId, RefundId } from "../domain/Ids.ts"
import { picked } from "../domain/InvoiceViews.ts"
import { changing, jsonFields } from "../domain/EntitySchema.ts"
import { formatAtomic } from "../domain/Money.ts"
import { NullableDate } from "../domain/Timestamps.ts"
import { paymentRequestOf } from "./PaymentRequest.ts"
import { sameAddress } from "./RefundMessage.ts"

export const REFUND_STATUSES = ["requested", "sent", "completed", "rejected"] as const
export const RefundStatus = Schema.Literals(REFUND_STATUSES)
export type RefundStatus = typeof RefundStatus.Type

/** Why an amount is refundable: more was paid than the invoice keeps, or the invoice was closed unpaid and keeps nothing. */
export const RefundReason = Schema.Literals(["overpayment", "close_unpaid"])
export type RefundReason = typeof RefundReason.Type

const NullableString = Schema.NullOr(Schema.String)

/**
 * A refund, declared once: what the payer asked to be sent back from one payment option (in the
 * option's asset, never re-priced), and the transaction the watchers saw paying it. The merchant
 * sends it from their own wallet: the service never holds the funds. Its row (RefundsRepo) and its
 * public and dashboard views are derived from these fields; `changing` marks what a change of it
 * may update (the rest is fixed when it is requested).
 */
export const Refund = Schema.Struct({
  id: RefundId,
  merchantId: MerchantId,
  invoiceId: InvoiceId,
  paymentOptionId: PaymentOptionId,
  network: Schema.String,
  assetCode: Schema.String,
  tokenContract: NullableString,
  decimals: Schema.Number,
  amountAtomic: Schema.BigInt,
  refundAddress: Schema.String,
  /** What the watchers match: EVM the lower-case refund address; bitcoin the address; solana the reference. */
  watchKey: Schema.String,
  /** Solana only: the reference key the refund transfer must carry (Solana Pay). */
  reference: NullableString,
  payerEmail: NullableString,
  reason: RefundReason,
  status: changing(RefundStatus),
  requiredConfirmations: Schema.Number,
  transactionHash: changing(NullableString),
  outputIndex: changing(Schema.NullOr(Schema.Number)),
  blockHeight: changing(Schema.NullOr(Schema.BigInt)),
  blockHash: changing(NullableString),
  confirmations: changing(Schema.Number),
  rejectionNote: changing(NullableString),
  /** What the address checks could not establish when it was requested (an EVM address not checked for code). */
  addressNote: NullableString,
  /** Signed by an address that paid the option (issue #52): EIP-191 on EVM, an ed25519 message signature on Solana. */
  verified: Schema.Boolean,
  /** The address that paid the option, as the watchers saw it when the refund was requested (null when unknown: bitcoin). */
  paidFrom: NullableString,
  /** When the merchant chose this request among the option's pending ones (the others were rejected then). */
  chosenAt: changing(NullableDate),
  requestedAt: Schema.Date,
  sentAt: changing(NullableDate),
  completedAt: changing(NullableDate),
  rejectedAt: changing(NullableDate),
  updatedAt: changing(Schema.Date)
})
export type RefundRecord = typeof Refund.Type

const RefundJson = jsonFields(Refund.fields)

/** The fields the payer page shows as they are stored (no email, no merchant). */
export const PUBLIC_REFUND_FIELDS = [
  "id",
  "paymentOptionId",
  "network",
  "assetCode",
  "refundAddress",
  "status",
  "transactionHash",
  "requestedAt",
  "completedAt",
  "rejectionNote",
  "verified"
] as const

/** The fields the merchant sees as they are stored: all but the merchant id and the exact integers (shown as text). */
const MERCHANT_OMITTED_FIELDS = ["merchantId", "amountAtomic", "blockHeight", "addressNote"] as const

const Amount = Schema.String.annotate({ description: "The refund amount in whole units of the asset, as decimal text (exact)" })

/** A refund on the payer page (GET/POST /api/checkout/pay/:id/refunds). */
export const PublicRefundView = Schema.Struct({
  ...Struct.pick(RefundJson, PUBLIC_REFUND_FIELDS),
  amount: Amount
}).annotate({ identifier: "PublicRefund" })
export type PublicRefundView = typeof PublicRefundView.Type

/** How the merchant pays the refund from their own wallet: a payment request for the exact amount. */
export const RefundPaymentRequest = Schema.Struct({
  uri: Schema.String.annotate({ description: "EIP-681 (EVM), Solana Pay (solana) or BIP21 (bitcoin) URI of the refund transfer" }),
  qrCode: Schema.String.annotate({ description: "SVG QR code of uri" }),
  recipient: Schema.String,
  tokenContract: NullableString,
  reference: NullableString
}).annotate({ identifier: "RefundPaymentRequest" })

/** A refund in the dashboard and in the `refund` field of refund webhooks. */
export const RefundView = Schema.Struct({
  ...Struct.omit(RefundJson, MERCHANT_OMITTED_FIELDS),
  amount: Amount,
  amountAtomic: Schema.String.annotate({ description: "The refund amount in the asset's smallest units" }),
  blockHeight: NullableString,
  differsFromPayer: Schema.Boolean.annotate({
    description: "True when refundAddress is not paidFrom (compared in lower case on EVM); false when who paid is unknown (paidFrom null)"
  }),
  paymentRequest: RefundPaymentRequest
}).annotate({ identifier: "Refund" })
export type RefundView = typeof RefundView.Type

/** What can be refunded on one option of an invoice now (the payer asks for all of it). */
export const RefundableView = Schema.Struct({
  paymentOptionId: Schema.String,
  network: Schema.String,
  assetCode: Schema.String,
  amount: Amount,
  amountAtomic: Schema.String,
  reason: RefundReason
}).annotate({ identifier: "Refundable" })

export const publicRefundView = (refund: RefundRecord): PublicRefundView => ({
  ...picked(refund, PUBLIC_REFUND_FIELDS),
  amount: formatAtomic(refund.amountAtomic, refund.decimals)
})

const MERCHANT_SHOWN_FIELDS = (Object.keys(Refund.fields) as Array<keyof RefundRecord>).filter(
  (key): key is Exclude<keyof RefundRecord, typeof MERCHANT_OMITTED_FIELDS[number]> => !(MERCHANT_OMITTED_FIELDS as ReadonlyArray<string>).includes(key)
)

/** The merchant's view of a refund, with the payment request to pay it from their wallet. */
export const refundView = (refund: RefundRecord): RefundView => ({
  ...picked(refund, MERCHANT_SHOWN_FIELDS),
  amount: formatAtomic(refund.amountAtomic, refund.decimals),
  amountAtomic: refund.amountAtomic.toString(),
  blockHeight: refund.blockHeight === null ? null : refund.blockHeight.toString(),
  differsFromPayer: refund.paidFrom !== null && !sameAddress(refund.network, refund.paidFrom, refund.refundAddress),
  paymentRequest: paymentRequestOf(refund)
})
