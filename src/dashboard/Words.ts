import type { ExceptionCloseAction, ExceptionStatus, ExceptionType, InvoiceStatus, WebhookEventName } from "../domain/Statuses.ts"

/**
 * The machine's names as the dashboard shows them (used by the browser script and by the chart's
 * layout on the server). A status the server adds fails the type check here until it has words.
 */
export const STATUS_WORDS = {
  awaiting_payment: "Awaiting payment",
  partially_paid: "Partially paid",
  payment_detected: "Payment detected",
  confirmed: "Confirmed",
  paid_out_of_band: "Paid out of band",
  expired: "Expired",
  voided: "Voided"
} as const satisfies Record<InvoiceStatus, string>

export const EXCEPTION_WORDS = {
  late_payment: "Late payment",
  partial_payment: "Partial payment"
} as const satisfies Record<ExceptionType, string>

export const EXCEPTION_STATUS_WORDS = { open: "open", closed: "closed" } as const satisfies Record<ExceptionStatus, string>

export const CLOSE_ACTION_WORDS = {
  accept_late_payment: "Accept the late payment",
  mark_paid_out_of_band: "Mark paid out of band",
  close_unpaid: "Close unpaid"
} as const satisfies Record<ExceptionCloseAction, string>

const WORDS: Readonly<Record<string, string>> = { ...STATUS_WORDS, ...EXCEPTION_WORDS, none: "No exception", open: "Open", closed: "Closed" }

/** A state or status name in words: `awaiting_payment` is "Awaiting payment"; an unknown name is spelt out. */
export const stateWords = (name: string): string => WORDS[name] ?? `${name.charAt(0).toUpperCase()}${name.slice(1).replaceAll("_", " ")}`

/** Each outbox event in words, for an invoice's timeline. An event the server adds fails the type check here until it has words. */
export const EVENT_WORDS = {
  invoice_created: "Invoice created",
  invoice_partially_paid: "Partial payment received",
  invoice_payment_detected: "Payment detected",
  invoice_confirmed: "Payment confirmed",
  invoice_expired: "Expired",
  invoice_voided: "Voided",
  invoice_payment_recorded: "Payment recorded as made elsewhere",
  invoice_exception_opened: "Exception opened",
  invoice_exception_closed: "Exception closed",
  refund_requested: "Refund requested",
  refund_completed: "Refund completed",
  refund_rejected: "Refund rejected"
} as const satisfies Record<WebhookEventName, string>

/** An outbox event in words: `invoice_payment_detected` is "Payment detected"; an unknown name is spelt out. */
export const eventWords = (name: string): string => (EVENT_WORDS as Readonly<Record<string, string>>)[name] ?? stateWords(name)
