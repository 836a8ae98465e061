export {
  type CheckoutClient,
  type CheckoutClientOptions,
  createCheckoutClient,
  type CreateInvoiceBody,
  type IdempotencyOptions,
  type Invoice,
  type InvoiceStatus,
  type RecordPaymentBody,
  type TestConfirmBody,
  type TestHelperResult,
  type TestPayBody,
  type TestReorgBody
} from "./client.ts"
export { CheckoutError, type CheckoutErrorDetails, WebhookSignatureError } from "./errors.ts"
export { parseWebhookEvent, verifyWebhookSignature, type WebhookEvent, type WebhookEventName } from "./webhooks.ts"
export type { components, paths, webhooks } from "./types.ts"
