import { statusesAccepting } from "../lifecycle/Lifecycle.ts"
import { Effect } from "effect"
import type * as Errors from "../domain/Errors.ts"
import { BadGateway, BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable } from "./ApiErrors.ts"

/** The shared domain errors (src/domain/Errors.ts); a feature's own errors are mapped in its errors module. */
export type DomainError =
  | Errors.InvoiceNotFound
  | Errors.InvalidRequest
  | Errors.InvoiceTransitionRejected
  | Errors.CheckoutConfigurationNotFound
  | Errors.IncompatibleTiming
  | Errors.PaymentMethodUnavailable
  | Errors.PaymentBackendUnavailable
  | Errors.BitcoinAddressesPreparing
  | Errors.BillingBlocked
  | Errors.IdempotencyConflict
  | Errors.SolanaPaymentNotPayable
  | Errors.SolanaPreparationUnavailable

/** "awaiting_payment, partially_paid or expired", as the lifecycle machine says. */
const RECORDABLE = ((statuses) => `${statuses.slice(0, -1).join(", ")} or ${statuses.at(-1)}`)(statusesAccepting({ type: "RECORD_PAYMENT" }))

const transitionMessage = (error: Errors.InvoiceTransitionRejected): string => {
  if (error.detail !== undefined) return error.detail
  switch (error.operation) {
    case "void":
      return `Only an invoice awaiting payment can be voided; this invoice is ${error.status}`
    case "record-payment":
      return `A payment can be recorded only for an invoice that is ${RECORDABLE}; this invoice is ${error.status}`
    case "close-exception":
      return `This invoice has no open exception that this action can close`
  }
}

/**
 * The one place where the shared domain errors become HTTP statuses and `{error}` messages: they are
 * raised by several features (invoices, the payment page, refunds, the simulator), so their HTTP
 * form is declared here, once. A feature's own errors are declared in its errors module.
 */
export const toHttpError = (error: DomainError) => {
  switch (error._tag) {
    case "InvoiceNotFound":
      return new NotFound({ error: "Invoice not found" })
    case "InvalidRequest":
      return new BadRequest({ error: error.message })
    case "InvoiceTransitionRejected":
      return new Conflict({ error: transitionMessage(error) })
    case "CheckoutConfigurationNotFound":
      return new NotFound({ error: "Checkout settings are not configured yet: save them in the dashboard" })
    case "IncompatibleTiming":
      return new Conflict({ error: error.message })
    case "PaymentMethodUnavailable":
      return new Conflict({ error: error.message })
    case "PaymentBackendUnavailable":
      return new BadGateway({ error: error.message })
    case "BitcoinAddressesPreparing":
      return new ServiceUnavailable({
        error: "Bitcoin address preparation is in progress and no other payment method is available. Retry shortly with the same Idempotency-Key."
      })
    case "BillingBlocked":
      return new Forbidden({ error: "Invoice creation is blocked by the account's billing status" })
    case "IdempotencyConflict":
      return new Conflict({ error: error.message })
    case "SolanaPaymentNotPayable":
      return new Conflict({ error: error.message })
    case "SolanaPreparationUnavailable":
      return new ServiceUnavailable({ error: "Solana payment preparation is temporarily unavailable. Retry in a few seconds." })
  }
}

export const mapDomainErrors = <A, R>(effect: Effect.Effect<A, DomainError, R>) => Effect.mapError(effect, toHttpError)
