import type { PaymentRecord } from "../domain/Invoice.ts"

/**
 * What a piece of evidence does to a payment row, as data: the repository turns it into SQL (see
 * EvidenceRepo.saveWith and saveIfUnchanged), so deciding a change never touches the database.
 */
export type PaymentWrite =
  | {
    readonly _tag: "InsertPayment"
    readonly payment: PaymentRecord
    readonly blockHeight: bigint | null
    readonly blockHash: string | null
    readonly seenInMempool: boolean
    /** What reaches a forwarder is swept on to the merchant's recipient once confirmed. */
    readonly sweepPending: boolean
    /** Who paid, when the watcher can tell (see ObservedPayment.payerAddress). */
    readonly payerAddress: string | null
  }
  | {
    readonly _tag: "UpdateConfirmations"
    readonly paymentId: string
    readonly confirmations: number
    readonly confirmedAt: Date | null
    /** Back in the mempool (no block until mined again), or mined: the block, when the watcher knows it. */
    readonly placement:
      | { readonly _tag: "Mempool" }
      | { readonly _tag: "Block"; readonly height: bigint | null; readonly hash: string | null }
  }
  | {
    readonly _tag: "InvalidatePayment"
    readonly paymentId: string
    readonly at: Date
    readonly reason: string
    /**
     * Set when a reorganisation invalidated evidence of a confirmed invoice: the height below which
     * the chain did not change. The invoice is judged again (SettleReorg) once the watcher has
     * processed the required confirmations beyond it; re-observing the payment first clears it.
     */
    readonly reorgPoint: bigint | null
  }
  | {
    /** The deferred judgement of a reorganisation is done: the payment no longer waits for it. */
    readonly _tag: "SettleReorg"
    readonly paymentId: string
  }
