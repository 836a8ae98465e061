import { Effect } from "effect"
import type { RefundRecord } from "./Refund.ts"
import { isCandidate } from "./Refundable.ts"
import type { RefundsRepo } from "./RefundsRepo.ts"
import { REQUEST_MESSAGES } from "./RequestDecision.ts"

/** A requested refund rejected (by the merchant, an invalidation or another request), with the note the payer sees. */
export const rejectedWith = (refund: RefundRecord, note: string, at: Date): RefundRecord => ({
  ...refund,
  status: "rejected",
  rejectionNote: note,
  rejectedAt: at,
  updatedAt: at
})

/**
 * The option's other pending requests give way to the one kept (chosen by the merchant, or paid:
 * the watchers saw its transfer), each rejected with its event. Within the caller's transaction.
 */
export const rejectOtherCandidates = (repo: RefundsRepo["Service"], kept: RefundRecord, at: Date) =>
  Effect.gen(function*() {
    const siblings = (yield* repo.listByOption(kept.invoiceId, kept.paymentOptionId)).filter((other) => other.id !== kept.id && isCandidate(other))
    for (const other of siblings) yield* repo.update(rejectedWith(other, REQUEST_MESSAGES.chosenOther, at), "requested", "refund_rejected")
  })
