import { Clock, Context, Data, Effect, Layer } from "effect"
import type { InvoiceRecord, PaymentRecord } from "../domain/Invoice.ts"
import { type EvidenceChangeKind, settle } from "../lifecycle/Settlement.ts"
import { type Change, decideChange } from "./EvidenceChange.ts"
import { EvidenceFollowUp } from "./EvidenceFollowUp.ts"
import { type EvidenceState, InvoiceRepo } from "./InvoiceRepo.ts"
import type { PaymentWrite } from "./PaymentWrite.ts"

/** One observed transfer to a payment option: what every chain watcher reports. */
export interface ObservedPayment {
  readonly paymentOptionId: string
  readonly transactionHash: string
  /** Output index (bitcoin), the log's position (EVM) or instruction index (solana) within the transaction. */
  readonly outputIndex: number
  readonly amountAtomic: bigint
  readonly confirmations: number
  readonly observedAt: Date
  readonly destinationAddress?: string | null | undefined
  readonly observedTotalAtomic?: bigint | undefined
  /** Where a chain watcher saw it mined (absent for simulated evidence). */
  readonly blockHeight?: bigint | undefined
  readonly blockHash?: string | undefined
  /** Seen unconfirmed in a mempool (bitcoin): 0 confirmations, no block, watched for replacement. */
  readonly inMempool?: boolean | undefined
}

/** One piece of evidence: network, transaction and output (for EVM the log's position in its transaction). */
export interface EvidenceIdentity {
  readonly network: string
  readonly transactionHash: string
  readonly outputIndex: number
}

/** Earlier evidence that no longer counts (a chain reorganisation dropped it). */
export interface EvidenceInvalidation extends EvidenceIdentity {
  readonly reason: string
  /**
   * From a chain watcher's reorganisation: the height below which the chain is unchanged. A
   * confirmed invoice left short is then judged only once the watcher has processed the network's
   * required confirmations beyond it (`settleReorg`), since the same transaction is usually mined
   * again. Without it (the simulator, a dropped mempool transaction) the invoice is judged at once.
   */
  readonly reorgPoint?: bigint | undefined
}

const changeKindOf = (change: Extract<Change, { _tag: "Write" }>): EvidenceChangeKind => ({
  late: change.latestIsLate,
  newLatePayment: change.isNew && change.latestIsLate
})

export class EvidenceRejected extends Data.TaggedError("EvidenceRejected")<{ readonly reason: string }> {}

export interface EvidenceResult {
  readonly invoice: InvoiceRecord
  readonly payment: PaymentRecord
}

/**
 * The single entry point for payment evidence (chain watchers and the simulator). Idempotent per
 * network + transaction + output index; recomputes the invoice's amounts and lets the lifecycle
 * machine decide the status, writing the payment, the invoice and its outbox events in one
 * statement. Changes to one invoice are serialised: a write applies only if the invoice is unchanged
 * since it was read and not locked, and otherwise the evidence is applied again under the row lock.
 */
export class PaymentEvidence extends Context.Service<PaymentEvidence, {
  readonly record: (payment: ObservedPayment) => Effect.Effect<EvidenceResult, EvidenceRejected>
  readonly invalidate: (invalidation: EvidenceInvalidation) => Effect.Effect<EvidenceResult, EvidenceRejected>
  /**
   * The deferred judgement of an invalidation with a reorg point, once the watcher has processed the
   * required confirmations beyond it: a confirmed invoice still short opens its partial_payment
   * exception now. Does nothing when the payment was observed again (or judged) meanwhile.
   */
  readonly settleReorg: (identity: EvidenceIdentity) => Effect.Effect<EvidenceResult, EvidenceRejected>
}>()("Invoices/PaymentEvidence") {
  static readonly layer = Layer.effect(
    PaymentEvidence,
    Effect.gen(function*() {
      const repo = yield* InvoiceRepo
      const followUp = yield* EvidenceFollowUp
      const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))

      /**
       * Recomputes the invoice from its payments (as they are after `write`), runs the lifecycle and
       * saves it under the lock in one statement with `write`, the payment row's change; returns the
       * saved invoice, or undefined when `write` touched no row (the caller fails, rolling back).
       */
      const settleAndSaveWith = (
        write: PaymentWrite,
        invoice: InvoiceRecord,
        payments: ReadonlyArray<PaymentRecord>,
        change: EvidenceChangeKind
      ) =>
        Effect.gen(function*() {
          const settled = yield* settlement(invoice, payments, change)
          const written = yield* repo.saveWith(write, settled.invoice, settled.events)
          return written === 1 ? settled.invoice : undefined
        })

      const settlement = (invoice: InvoiceRecord, payments: ReadonlyArray<PaymentRecord>, change: EvidenceChangeKind) =>
        Effect.map(now, (at) => {
          const ordered = [...payments].sort((a, b) => a.observedAt.getTime() - b.observedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          return settle(invoice, ordered, at, change)
        })

      /** The invoice as read and the change an observation makes to it (or its answer when it makes none); fails when refused. */
      const changeOf = (state: EvidenceState | undefined, observed: ObservedPayment) =>
        Effect.gen(function*() {
          if (state === undefined) return yield* new EvidenceRejected({ reason: "unknown payment option" })
          const change = decideChange(state, observed, yield* now)
          if (change._tag === "Rejected") return yield* new EvidenceRejected({ reason: change.reason })
          return { state, change }
        })

      /** Under the invoice lock: the authoritative path, taken when the invoice changed since it was read. */
      const recordLocked = (observed: ObservedPayment) =>
        repo.withTransaction(Effect.gen(function*() {
          const { state, change } = yield* changeOf(yield* repo.lockForEvidence(observed.paymentOptionId), observed)
          if (change._tag === "Unchanged") return change.result
          const saved = yield* settleAndSaveWith(change.write, state.invoice, change.payments, changeKindOf(change))
          if (saved !== undefined) return { invoice: saved, payment: change.payment }
          // The output already matched elsewhere (or is counted under its pre-0015 EVM identity): the
          // rejection rolls back the transaction.
          if (change.isNew) return yield* new EvidenceRejected({ reason: "this transaction output is already matched to another payment option" })
          return yield* Effect.die(new Error(`payment ${change.payment.id} vanished under the invoice lock`))
        }))

      const record = Effect.fn("PaymentEvidence.record")(function*(observed: ObservedPayment) {
        if (observed.amountAtomic <= 0n) return yield* new EvidenceRejected({ reason: "amount must be positive" })
        if (!Number.isInteger(observed.outputIndex) || observed.outputIndex < 0) {
          return yield* new EvidenceRejected({ reason: "output index must be a non-negative integer" })
        }
        // Optimistic first: read, decide, and write in one statement that applies only if the invoice
        // is still as read (two round trips, no transaction held open). Anything else takes the lock.
        const { state, change } = yield* changeOf(yield* repo.readForEvidence(observed.paymentOptionId), observed)
        if (change._tag === "Unchanged") return change.result
        const settled = yield* settlement(state.invoice, change.payments, changeKindOf(change))
        if (yield* repo.saveIfUnchanged(state.version, change.write, settled.invoice, settled.events)) {
          return { invoice: settled.invoice, payment: change.payment }
        }
        return yield* recordLocked(observed)
      })

      const invalidate = Effect.fn("PaymentEvidence.invalidate")(function*(invalidation: EvidenceInvalidation) {
        const invoiceId = yield* repo.invoiceIdOfPayment(invalidation.network, invalidation.transactionHash, invalidation.outputIndex)
        if (invoiceId === undefined) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
        return yield* repo.withTransaction(Effect.gen(function*() {
          const invoice = yield* repo.lockForUpdate(invoiceId)
          if (invoice === undefined) return yield* new EvidenceRejected({ reason: "unknown invoice" })
          const existing = yield* repo.lockPayment(invalidation.network, invalidation.transactionHash, invalidation.outputIndex)
          if (existing === undefined) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
          if (existing.invalidatedAt !== null) return { invoice, payment: existing }
          const at = yield* now
          const deferred = invoice.status === "confirmed" && invalidation.reorgPoint !== undefined
          if (invoice.status === "confirmed") {
            yield* Effect.logWarning("Evidence of a confirmed invoice was invalidated; the invoice stays confirmed").pipe(
              Effect.annotateLogs({ invoiceId: invoice.id, transactionHash: invalidation.transactionHash, judgedAfterReorgSettles: deferred })
            )
          }
          const invalidated: PaymentRecord = { ...existing, invalidatedAt: at, invalidationReason: invalidation.reason }
          const payments = yield* repo.listPayments(invoice.id)
          const saved = yield* settleAndSaveWith(
            { _tag: "InvalidatePayment", paymentId: existing.id, at, reason: invalidation.reason, reorgPoint: deferred ? invalidation.reorgPoint! : null },
            invoice,
            payments.map((payment) => (payment.id === existing.id ? invalidated : payment)),
            { late: existing.late, reorgSettled: !deferred }
          )
          if (saved === undefined) return yield* Effect.die(new Error(`payment ${existing.id} vanished under the invoice lock`))
          yield* followUp.afterCoverageLoss(saved.id, "invalidation")
          return { invoice: saved, payment: invalidated }
        }))
      })

      const settleReorg = Effect.fn("PaymentEvidence.settleReorg")(function*(identity: EvidenceIdentity) {
        const invoiceId = yield* repo.invoiceIdOfPayment(identity.network, identity.transactionHash, identity.outputIndex)
        if (invoiceId === undefined) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
        return yield* repo.withTransaction(Effect.gen(function*() {
          const invoice = yield* repo.lockForUpdate(invoiceId)
          if (invoice === undefined) return yield* new EvidenceRejected({ reason: "unknown invoice" })
          const existing = yield* repo.lockPayment(identity.network, identity.transactionHash, identity.outputIndex)
          if (existing === undefined) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
          const payments = yield* repo.listPayments(invoice.id)
          // No row written (observed again, or judged by another instance): nothing changes.
          const saved = yield* settleAndSaveWith({ _tag: "SettleReorg", paymentId: existing.id }, invoice, payments, { late: existing.late, reorgSettled: true })
          if (saved !== undefined) yield* followUp.afterCoverageLoss(saved.id, "invalidation")
          return { invoice: saved ?? invoice, payment: existing }
        }))
      })

      return { record, invalidate, settleReorg }
    })
  )
}
