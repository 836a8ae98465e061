import { ceilDiv } from "../domain/Money.ts"
import type { RefundReason, RefundStatus } from "./Refund.ts"

/**
 * What can be refunded on an invoice: a pure rule of the invoice's state, its options, payments and
 * refunds (no I/O). Only confirmed payments count (valid, not invalidated, with the required
 * confirmations), so that money a reorganisation can still take away is never refunded. Amounts are
 * in each option's asset (atomic units), never re-priced.
 */

export interface RefundableInvoice {
  readonly amountMicros: bigint
  readonly status: string
  readonly exceptionStatus: string | null
  readonly exceptionAction: string | null
}

export interface RefundableOption {
  readonly id: string
  readonly quotedAtomic: bigint
}

export interface RefundablePayment {
  readonly paymentOptionId: string
  readonly amountAtomic: bigint
  readonly usdMicros: bigint
  readonly observedAt: Date
  readonly confirmedAt: Date | null
  readonly invalidatedAt: Date | null
}

export interface CountedRefund {
  readonly paymentOptionId: string
  readonly amountAtomic: bigint
  readonly status: RefundStatus
  /** When the merchant chose it among the option's pending requests (absent or null: not chosen). */
  readonly chosenAt?: Date | null | undefined
}

/**
 * A pending request the merchant has not chosen (issue #52): the option's pending requests stand
 * side by side as alternatives for the same money, so together they claim it once.
 */
export const isCandidate = (refund: CountedRefund): boolean => refund.status === "requested" && (refund.chosenAt ?? null) === null

/** What the option's refunds claim beside the pending candidates: every one that is neither rejected nor a candidate. */
const settledClaim = (refunds: ReadonlyArray<CountedRefund>): bigint =>
  refunds.reduce((sum, refund) => refund.status === "rejected" || isCandidate(refund) ? sum : sum + refund.amountAtomic, 0n)

export interface Refundable {
  readonly paymentOptionId: string
  /** What the option's confirmed payments brought in, what the invoice keeps of it, and what refunds already claim. */
  readonly receivedAtomic: bigint
  readonly keptAtomic: bigint
  /** What its refunds claim beside the pending candidates (sent, completed, chosen). */
  readonly claimedAtomic: bigint
  /** What a new refund request on this option would be for, beside any pending candidates (0 when none). */
  readonly refundableAtomic: bigint
  readonly reason: RefundReason
}

const counts = (payment: RefundablePayment) => payment.confirmedAt !== null && payment.invalidatedAt === null

/** Why the invoice refunds anything, or undefined when it refunds nothing in its present state. */
export const refundReasonOf = (invoice: RefundableInvoice, confirmedUsdMicros: bigint): RefundReason | undefined => {
  if (invoice.exceptionStatus === "open") return undefined
  const closedWith = invoice.exceptionStatus === "closed" ? invoice.exceptionAction : null
  if (closedWith === "close_unpaid") return "close_unpaid"
  const keepsItsAmount = invoice.status === "confirmed" || closedWith === "accept_late_payment"
  return keepsItsAmount && confirmedUsdMicros > invoice.amountMicros ? "overpayment" : undefined
}

/**
 * Per option with confirmed payments, in the order of their first payment: what was
 * received, what the invoice keeps and what remains refundable. On an overpayment the invoice keeps
 * its amount, taken from the options in that order; each option's share is converted at its quote,
 * rounded up in the merchant's favour and capped at what it received. Closed unpaid, it keeps nothing.
 * Refunds that are not rejected are deducted (even sent or completed ones: that money has left),
 * except the pending candidates: a new request stands beside them, for the same amount.
 */
export const refundable = (
  invoice: RefundableInvoice,
  options: ReadonlyArray<RefundableOption>,
  payments: ReadonlyArray<RefundablePayment>,
  refunds: ReadonlyArray<CountedRefund>
): ReadonlyArray<Refundable> => {
  const confirmed = payments.filter(counts)
  const reason = refundReasonOf(invoice, confirmed.reduce((sum, payment) => sum + payment.usdMicros, 0n))
  if (reason === undefined) return []
  // The order of each option's first payment, whatever became of it: a confirmation or an
  // invalidation never reorders the options, so a confirmation never moves what an option keeps up.
  const firstPaid = new Map<string, number>()
  for (const payment of payments) {
    const at = payment.observedAt.getTime()
    const known = firstPaid.get(payment.paymentOptionId)
    if (known === undefined || at < known) firstPaid.set(payment.paymentOptionId, at)
  }
  const ordered = options
    .filter((option) => confirmed.some((payment) => payment.paymentOptionId === option.id))
    .sort((a, b) => firstPaid.get(a.id)! - firstPaid.get(b.id)! || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
  let remainingMicros = reason === "overpayment" ? invoice.amountMicros : 0n
  return ordered.map((option) => {
    const own = confirmed.filter((payment) => payment.paymentOptionId === option.id)
    const receivedAtomic = own.reduce((sum, payment) => sum + payment.amountAtomic, 0n)
    const usdMicros = own.reduce((sum, payment) => sum + payment.usdMicros, 0n)
    const keptUsd = remainingMicros < usdMicros ? remainingMicros : usdMicros
    remainingMicros -= keptUsd
    const keptShare = invoice.amountMicros > 0n ? ceilDiv(keptUsd * option.quotedAtomic, invoice.amountMicros) : 0n
    const keptAtomic = keptShare < receivedAtomic ? keptShare : receivedAtomic
    const claimedAtomic = settledClaim(refunds.filter((refund) => refund.paymentOptionId === option.id))
    const left = receivedAtomic - keptAtomic - claimedAtomic
    return { paymentOptionId: option.id, receivedAtomic, keptAtomic, claimedAtomic, refundableAtomic: left > 0n ? left : 0n, reason }
  })
}

/**
 * The requested refunds to reject after the evidence changed: on each option, while its
 * unrejected refunds claim more than it received minus what the invoice keeps, the chosen requested
 * ones are rejected, newest first (sent and completed ones cannot be taken back); then each pending
 * candidate that no longer fits beside them.
 */
export const refundsToReject = <R extends CountedRefund & { readonly requestedAt: Date }>(
  invoice: RefundableInvoice,
  options: ReadonlyArray<RefundableOption>,
  payments: ReadonlyArray<RefundablePayment>,
  refunds: ReadonlyArray<R>
): ReadonlyArray<R> => {
  const byOption = new Map(refundable(invoice, options, payments, []).map((entry) => [entry.paymentOptionId, entry.receivedAtomic - entry.keptAtomic]))
  const rejected: Array<R> = []
  const optionIds = new Set(refunds.map((refund) => refund.paymentOptionId))
  for (const optionId of optionIds) {
    const allowed = byOption.get(optionId) ?? 0n
    // Rejected refunds claim nothing and are neither requested nor candidates: no need to leave them out here.
    const own = refunds.filter((refund) => refund.paymentOptionId === optionId)
    let claimed = settledClaim(own)
    const requested = own.filter((refund) => refund.status === "requested" && !isCandidate(refund))
      .sort((a, b) => b.requestedAt.getTime() - a.requestedAt.getTime())
    for (const refund of requested) {
      if (claimed <= allowed) break
      rejected.push(refund)
      claimed -= refund.amountAtomic
    }
    rejected.push(...own.filter((refund) => isCandidate(refund) && claimed + refund.amountAtomic > allowed))
  }
  return rejected
}

/**
 * What the payer can ask for now: each option's refundable amount, leaving out the options with
 * nothing refundable and those whose refunds are past the request stage: while the option has a
 * pending candidate, another request may stand beside it (issue #52); once the merchant chose one,
 * or rejected them all, the option is closed to requests (a rejection is final).
 */
export const requestable = (
  invoice: RefundableInvoice,
  options: ReadonlyArray<RefundableOption>,
  payments: ReadonlyArray<RefundablePayment>,
  refunds: ReadonlyArray<CountedRefund>
): ReadonlyArray<Refundable> => {
  const open = (optionId: string) => {
    const own = refunds.filter((refund) => refund.paymentOptionId === optionId)
    return own.length === 0 || own.some(isCandidate)
  }
  return refundable(invoice, options, payments, refunds).filter((entry) => entry.refundableAtomic > 0n && open(entry.paymentOptionId))
}
