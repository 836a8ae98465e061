import type { RefundRecord } from "./Refund.ts"
import { isCandidate } from "./Refundable.ts"

/** How many requests of one option may stand side by side while the merchant has not chosen (issue #52). */
export const PENDING_REQUESTS_PER_OPTION = 5

export const REQUEST_MESSAGES = {
  verifiedPending: "A request signed by the paying address is pending for this payment option",
  full: `${PENDING_REQUESTS_PER_OPTION} refund requests are already pending for this payment option`,
  replacedBySigned: "Replaced by a request signed by the paying address",
  replacedByNewerSigned: "Replaced by a newer request signed by the paying address",
  chosenOther: "The merchant chose another refund request"
} as const

/** What a new request does beside the option's refunds: answer a pending one again, be refused, or stand (rejecting those it replaces). */
export type RequestDecision =
  | { readonly _tag: "Repeat"; readonly refund: RefundRecord }
  | { readonly _tag: "Refused"; readonly message: string }
  | { readonly _tag: "Stand"; readonly replaces: ReadonlyArray<{ readonly refund: RefundRecord; readonly note: string }> }

/**
 * The rule of side-by-side requests, without I/O. A repeat of a pending request (same address, and
 * not a signed repeat of an unsigned one) answers it again, as does a repeat once the option is past
 * the request stage. A verified request (signed by an address
 * that paid) replaces every pending one; an unverified one stands beside the pending unverified
 * ones, up to PENDING_REQUESTS_PER_OPTION, and is refused beside a verified one.
 */
export const decideRequest = (optionRefunds: ReadonlyArray<RefundRecord>, address: string, verified: boolean): RequestDecision => {
  const pending = optionRefunds.filter(isCandidate)
  // Past the request stage (chosen, paid, rejected): a repeat to an address asked for answers that refund.
  const earlier = pending.length === 0 ? optionRefunds.findLast((refund) => refund.refundAddress === address) : undefined
  if (earlier !== undefined) return { _tag: "Repeat", refund: earlier }
  const same = pending.find((refund) => refund.refundAddress === address)
  if (same !== undefined && (same.verified || !verified)) return { _tag: "Repeat", refund: same }
  if (verified) {
    return {
      _tag: "Stand",
      replaces: pending.map((refund) => ({ refund, note: refund.verified ? REQUEST_MESSAGES.replacedByNewerSigned : REQUEST_MESSAGES.replacedBySigned }))
    }
  }
  if (pending.some((refund) => refund.verified)) return { _tag: "Refused", message: REQUEST_MESSAGES.verifiedPending }
  if (pending.length >= PENDING_REQUESTS_PER_OPTION) return { _tag: "Refused", message: REQUEST_MESSAGES.full }
  return { _tag: "Stand", replaces: [] }
}
