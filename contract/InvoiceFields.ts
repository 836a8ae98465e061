/** The fields of the invoice, its payment options and its payments that each response shows as they are stored (the schemas pick them in InvoiceResponses.ts). */

/** The invoice's own fields that every invoice view shows as they are stored. */
export const INVOICE_SHOWN_FIELDS = [
  "id",
  "status",
  "confirmations",
  "productName",
  "issuedBy",
  "billTo",
  "redirectUrl",
  "lastTransactionHash",
  "defaultPaymentOptionId",
  "lastPaymentOptionId",
  "paymentDetectedAt",
  "confirmedAt",
  "paidOutOfBandAt",
  "exceptionType",
  "exceptionStatus",
  "exceptionAction",
  "exceptionClosedAt",
  "createdAt",
  "lastPaymentObservedAt",
  "livemode"
] as const
/** Merchant-only fields of the invoice, never shown to the payer. */
export const INVOICE_MERCHANT_FIELDS = [
  "merchantReference",
  "customerId",
  "customerEmail",
  "metadata",
  "paidOutOfBandNote",
  "exceptionNote"
] as const
/** The fields of the status payload (and of the webhook's invoice) taken from the invoice as they are. */
export const STATUS_SHOWN_FIELDS = [
  "status",
  "confirmations",
  "paymentDetectedAt",
  "confirmedAt",
  "paidOutOfBandAt",
  "paidOutOfBandNote",
  "defaultPaymentOptionId",
  "lastPaymentOptionId",
  "lastPaymentObservedAt",
  "livemode"
] as const
export const WEBHOOK_SHOWN_FIELDS = [
  "id",
  ...STATUS_SHOWN_FIELDS.filter((field) => field !== "lastPaymentObservedAt"),
  "lastTransactionHash",
  "exceptionType",
  "exceptionStatus",
  "exceptionAction",
  "exceptionNote",
  "exceptionClosedAt",
  "metadata"
] as const
export const OPTION_SHOWN_FIELDS = [
  "id",
  "railType",
  "assetCode",
  "network",
  "tokenContract",
  "destinationAddress",
  "paymentUri",
  "qrCode",
  "isDefault",
  "optionPayload"
] as const
export const PAYMENT_SHOWN_FIELDS = [
  "id",
  "paymentOptionId",
  "assetCode",
  "network",
  "destinationAddress",
  "transactionHash",
  "confirmations",
  "observedAt",
  "confirmedAt",
  "invalidatedAt",
  "invalidationReason"
] as const
