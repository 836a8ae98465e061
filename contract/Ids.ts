import { Schema } from "effect"

/** Branded identifiers: an invoice id cannot be passed where a payment id is expected. */
export const MerchantId = Schema.String.pipe(Schema.brand("MerchantId"))
export type MerchantId = typeof MerchantId.Type

export const InvoiceId = Schema.String.pipe(Schema.brand("InvoiceId"))
export type InvoiceId = typeof InvoiceId.Type

export const PaymentOptionId = Schema.String.pipe(Schema.brand("PaymentOptionId"))
export type PaymentOptionId = typeof PaymentOptionId.Type

export const PaymentId = Schema.String.pipe(Schema.brand("PaymentId"))
export type PaymentId = typeof PaymentId.Type

export const ApiKeyId = Schema.String.pipe(Schema.brand("ApiKeyId"))
export type ApiKeyId = typeof ApiKeyId.Type

export const DeliveryId = Schema.String.pipe(Schema.brand("DeliveryId"))
export type DeliveryId = typeof DeliveryId.Type

export const RefundId = Schema.String.pipe(Schema.brand("RefundId"))
export type RefundId = typeof RefundId.Type
