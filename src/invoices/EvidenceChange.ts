import { usdValueOf } from "../domain/Evidence.ts"
import { PaymentId } from "../domain/Ids.ts"
import type { PaymentRecord } from "../domain/Invoice.ts"
import { isLateEvidence } from "../lifecycle/Settlement.ts"
import type { EvidenceState } from "./InvoiceRepo.ts"
import type { PaymentWrite } from "./PaymentWrite.ts"
import type { EvidenceResult, ObservedPayment } from "./PaymentEvidence.ts"

/** What one observation does to an invoice: nothing, a refusal, or a payment row to write and the payments after it. */
export type Change =
  | { readonly _tag: "Rejected"; readonly reason: string }
  | { readonly _tag: "Unchanged"; readonly result: EvidenceResult }
  | {
    readonly _tag: "Write"
    readonly payment: PaymentRecord
    readonly isNew: boolean
    /** The invoice's payments with this change applied. */
    readonly payments: ReadonlyArray<PaymentRecord>
    readonly latestIsLate: boolean
    readonly write: PaymentWrite
  }

/** What one observation changes, decided from the invoice and its payments as read. */
export const decideChange = (state: EvidenceState, observed: ObservedPayment, at: Date): Change => {
  const { invoice, option, payments } = state
  const reachedThreshold = observed.confirmations >= option.requiredConfirmations
  const existing = payments.find((payment) =>
    payment.network === option.network && payment.transactionHash === observed.transactionHash &&
    payment.outputIndex === observed.outputIndex
  )
  if (existing !== undefined) {
    if (existing.paymentOptionId !== option.id) {
      return { _tag: "Rejected", reason: "this transaction output is already matched to another payment option" }
    }
    // A mempool sighting of evidence that counts (already seen there, or mined since) changes nothing.
    if (observed.inMempool === true && existing.invalidatedAt === null) return { _tag: "Unchanged", result: { invoice, payment: existing } }
    // Evidence that comes back after an invalidation (re-mined after a reorg) confirms afresh.
    const confirmedAt = (existing.invalidatedAt === null ? existing.confirmedAt : null) ?? (reachedThreshold ? at : null)
    const unchanged = existing.confirmations === observed.confirmations && existing.invalidatedAt === null &&
      existing.confirmedAt === confirmedAt
    if (unchanged) return { _tag: "Unchanged", result: { invoice, payment: existing } }
    const updated: PaymentRecord = { ...existing, confirmations: observed.confirmations, confirmedAt, invalidatedAt: null, invalidationReason: null }
    return {
      _tag: "Write",
      payment: updated,
      isNew: false,
      payments: payments.map((payment) => (payment.id === existing.id ? updated : payment)),
      latestIsLate: existing.late,
      write: {
        _tag: "UpdateConfirmations",
        paymentId: existing.id,
        confirmations: observed.confirmations,
        confirmedAt,
        placement: observed.inMempool === true
          ? { _tag: "Mempool" }
          : { _tag: "Block", height: observed.blockHeight ?? null, hash: observed.blockHash ?? null }
      }
    }
  }
  const late = isLateEvidence(invoice, observed.observedAt)
  const payment: PaymentRecord = {
    id: PaymentId.make(crypto.randomUUID()),
    invoiceId: invoice.id,
    paymentOptionId: option.id,
    assetCode: option.assetCode,
    network: option.network,
    destinationAddress: observed.destinationAddress ?? option.destinationAddress,
    transactionHash: observed.transactionHash,
    outputIndex: observed.outputIndex,
    decimals: option.decimals,
    amountAtomic: observed.amountAtomic,
    observedTotalAtomic: observed.observedTotalAtomic ?? observed.amountAtomic,
    usdMicros: usdValueOf(observed.amountAtomic, option.quotedAtomic, invoice.amountMicros),
    quotedAtomic: option.quotedAtomic,
    confirmations: observed.confirmations,
    late,
    observedAt: observed.observedAt,
    confirmedAt: reachedThreshold ? at : null,
    invalidatedAt: null,
    invalidationReason: null
  }
  return {
    _tag: "Write",
    payment,
    isNew: true,
    payments: [...payments, payment],
    latestIsLate: late,
    write: {
      _tag: "InsertPayment",
      payment,
      blockHeight: observed.blockHeight ?? null,
      blockHash: observed.blockHash ?? null,
      seenInMempool: observed.inMempool === true,
      sweepPending: option.railType === "wallet_contract"
    }
  }
}
