import type { WebhookEventName } from "../lifecycle/InvoiceMachine.ts"

export const WEBHOOK_EVENTS: ReadonlyArray<WebhookEventName> = [
  "invoice_created",
  "invoice_partially_paid",
  "invoice_payment_detected",
  "invoice_confirmed",
  "invoice_expired",
  "invoice_voided",
  "invoice_payment_recorded",
  "invoice_exception_opened",
  "invoice_exception_closed"
]

/** Retry delays after the 1st, 2nd and 3rd failed attempt; a 4th failure is final. */
export const RETRY_DELAYS_MS: ReadonlyArray<number> = [60_000, 5 * 60_000, 15 * 60_000]
