import { Schema } from "effect"

/** The invoice statuses of the spec; the lifecycle machine decides which one applies. */
export const INVOICE_STATUSES = [
  "awaiting_payment",
  "partially_paid",
  "payment_detected",
  "confirmed",
  "paid_out_of_band",
  "expired",
  "voided"
] as const
export const InvoiceStatus = Schema.Literals(INVOICE_STATUSES)
export type InvoiceStatus = typeof InvoiceStatus.Type

/** How the valid payments cover the amount (domain/Coverage.ts in the service decides which). */
export const PaymentCoverage = Schema.Literals(["no_payment", "partial_payment", "exact_payment", "overpayment"])
export type PaymentCoverage = typeof PaymentCoverage.Type

export const ExceptionType = Schema.Literals(["late_payment", "partial_payment"])
export type ExceptionType = typeof ExceptionType.Type

export const ExceptionStatus = Schema.Literals(["open", "closed"])
export type ExceptionStatus = typeof ExceptionStatus.Type

export const ExceptionCloseAction = Schema.Literals(["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"])
export type ExceptionCloseAction = typeof ExceptionCloseAction.Type

export const WEBHOOK_EVENT_NAMES = [
  "invoice_created",
  "invoice_partially_paid",
  "invoice_payment_detected",
  "invoice_confirmed",
  "invoice_expired",
  "invoice_voided",
  "invoice_payment_recorded",
  "invoice_exception_opened",
  "invoice_exception_closed"
] as const
/** The refund events (issue #40): selectable in the webhook settings, off by default. */
export const REFUND_WEBHOOK_EVENT_NAMES = ["refund_requested", "refund_completed", "refund_rejected"] as const
export type RefundWebhookEventName = typeof REFUND_WEBHOOK_EVENT_NAMES[number]

/** Every event the outbox may hold: the spec's nine and the refund events. */
export const WebhookEventName = Schema.Literals([...WEBHOOK_EVENT_NAMES, ...REFUND_WEBHOOK_EVENT_NAMES])
export type WebhookEventName = typeof WebhookEventName.Type
