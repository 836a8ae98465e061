import { Data, Effect } from "effect"
import { Conflict, NotFound } from "../http/ApiErrors.ts"
import { type DomainError, toHttpError } from "../http/ErrorMapping.ts"

/** The invoice has no payment option of that id. */
export class PaymentOptionNotFound extends Data.TaggedError("PaymentOptionNotFound")<{ readonly paymentOptionId: string }> {}
/** Nothing on this option can be refunded now (see Refundable.ts). */
export class NothingToRefund extends Data.TaggedError("NothingToRefund")<{ readonly paymentOptionId: string }> {}
/** One refund per invoice and option, ever: this option has one, to another address. */
export class RefundAlreadyRequested extends Data.TaggedError("RefundAlreadyRequested")<{ readonly paymentOptionId: string }> {}
/** No refund of that id for this merchant. */
export class RefundNotFound extends Data.TaggedError("RefundNotFound")<{ readonly refundId: string }> {}
/** The refund is not in a status that allows the operation (`message` says which). */
export class RefundStatusConflict extends Data.TaggedError("RefundStatusConflict")<{ readonly message: string }> {}

type RefundError = PaymentOptionNotFound | NothingToRefund | RefundAlreadyRequested | RefundNotFound | RefundStatusConflict

/** The refunds feature's errors as HTTP errors, each status and message written once here (RefundsApi.ts lists their statuses). */
const refundHttpError = (error: RefundError | DomainError) => {
  switch (error._tag) {
    case "PaymentOptionNotFound":
      return new NotFound({ error: "Payment option not found" })
    case "NothingToRefund":
      return new Conflict({ error: "Nothing to refund on this payment option" })
    case "RefundAlreadyRequested":
      return new Conflict({ error: "A refund was already requested for this payment option" })
    case "RefundNotFound":
      return new NotFound({ error: "Refund not found" })
    case "RefundStatusConflict":
      return new Conflict({ error: error.message })
    default:
      return toHttpError(error)
  }
}

/** A refunds use case's failures as their HTTP errors (the shared domain errors through ErrorMapping.ts). */
export const mapRefundErrors = <A, R>(effect: Effect.Effect<A, RefundError | DomainError, R>) => Effect.mapError(effect, refundHttpError)
