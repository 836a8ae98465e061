import type { InvoiceView, PaymentOptionView, PaymentView } from "../../contract/InvoiceResponses.ts"
import type { ChainWatcherStatus } from "../../src/ops/ChainWatcherStatus.ts"
import type { QuoteView } from "../../src/invoices/InvoiceQuoteRepo.ts"
import type { CheckoutSettingsView } from "../../src/payments/CheckoutSettingsApi.ts"
import type { PublicRefundView, RefundableView, RefundView } from "../../src/refunds/Refund.ts"
import type { Delivery } from "../../src/webhooks/WebhooksApi.ts"
import type { JsonBody } from "./TestApp.ts"

/** The JSON forms of the API's answers, from the contract's response schemas: what suites read of a body. */
export type InvoiceJson = typeof InvoiceView.Encoded
export type OptionJson = typeof PaymentOptionView.Encoded
export type PaymentJson = typeof PaymentView.Encoded
export type QuoteJson = typeof QuoteView.Encoded
export type RefundJson = typeof RefundView.Encoded
export type PublicRefundJson = typeof PublicRefundView.Encoded
export type RefundableJson = typeof RefundableView.Encoded
export type SettingsJson = typeof CheckoutSettingsView.Encoded
export type DeliveryJson = typeof Delivery.Encoded
export type MethodJson = SettingsJson["paymentMethods"][number]
export type EndpointJson = ChainWatcherStatus["endpoints"][number]

/** The payment options of an invoice answer's body. */
export const paymentOptions = (body: JsonBody): ReadonlyArray<OptionJson> => body.paymentOptions

/** The payments of an invoice answer's body (merchant views). */
export const paymentsOf = (body: JsonBody): ReadonlyArray<PaymentJson> => body.payments

/** The invoice's option where `matches` (its network, by default); throws when it has none. */
export const optionOn = (body: JsonBody, network: string, matches: (option: OptionJson) => boolean = (option) => option.network === network): OptionJson => {
  const option = paymentOptions(body).find(matches)
  if (option === undefined) throw new Error(`the invoice has no ${network} option`)
  return option
}

/** A field of an option's payload (the wallet contract's address, a Solana reference). */
export const payloadField = (option: OptionJson, field: string): string => {
  const value = option.optionPayload?.[field]
  if (typeof value !== "string") throw new Error(`the ${option.network} option's payload has no ${field}`)
  return value
}
