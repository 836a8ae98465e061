import { Data } from "effect"

export class InvoiceNotFound extends Data.TaggedError("InvoiceNotFound")<{ readonly invoiceId: string }> {}
export class InvalidRequest extends Data.TaggedError("InvalidRequest")<{ readonly message: string }> {}
export class InvoiceTransitionRejected extends Data.TaggedError("InvoiceTransitionRejected")<{
  readonly invoiceId: string
  readonly operation: "void" | "record-payment" | "close-exception"
  readonly status: string
  readonly detail?: string | undefined
}> {}
export class CheckoutConfigurationNotFound extends Data.TaggedError("CheckoutConfigurationNotFound")<{}> {}
export class IncompatibleTiming extends Data.TaggedError("IncompatibleTiming")<{ readonly message: string }> {}
export class PaymentMethodUnavailable extends Data.TaggedError("PaymentMethodUnavailable")<{ readonly message: string }> {}
export class PaymentBackendUnavailable extends Data.TaggedError("PaymentBackendUnavailable")<{ readonly message: string }> {}
export class BitcoinAddressesPreparing extends Data.TaggedError("BitcoinAddressesPreparing")<{}> {}
export class BillingBlocked extends Data.TaggedError("BillingBlocked")<{}> {}
export class IdempotencyConflict extends Data.TaggedError("IdempotencyConflict")<{ readonly message: string }> {}

/** The invoice or the chosen option cannot be paid through a prepared Solana transaction now. */
export class SolanaPaymentNotPayable extends Data.TaggedError("SolanaPaymentNotPayable")<{ readonly message: string }> {}
/** No blockhash from the Solana RPC in time (or none configured): the payer may retry shortly. */
export class SolanaPreparationUnavailable extends Data.TaggedError("SolanaPreparationUnavailable")<{}> {}

/** Over a rate limit: retry after the given number of seconds. */
export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly retryAfterSeconds: number }> {}

/** The invoice has no payment option of that id. */
export class PaymentOptionNotFound extends Data.TaggedError("PaymentOptionNotFound")<{ readonly paymentOptionId: string }> {}
/** Nothing on this option can be refunded now (see refunds/Refundable.ts). */
export class NothingToRefund extends Data.TaggedError("NothingToRefund")<{ readonly paymentOptionId: string }> {}
/** The option is past the request stage: the merchant chose a request, or rejected them all. */
export class RefundAlreadyRequested extends Data.TaggedError("RefundAlreadyRequested")<{ readonly paymentOptionId: string }> {}
/** No refund of that id for this merchant. */
export class RefundNotFound extends Data.TaggedError("RefundNotFound")<{ readonly refundId: string }> {}
/** The refund is not in a status that allows the operation (`message` says which). */
export class RefundStatusConflict extends Data.TaggedError("RefundStatusConflict")<{ readonly message: string }> {}
