import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import type { InvoiceRecord } from "../domain/Invoice.ts"
import {
  ALREADY_MATCHED,
  decideInvalidation,
  decideObservation,
  decideReorgSettlement,
  type EvidenceDecision,
  type EvidenceIdentity,
  type EvidenceInvalidation,
  type EvidenceOfInvoice,
  type EvidenceResult,
  type ObservedPayment,
  observationProblem
} from "./EvidenceDecision.ts"
import { EvidenceFollowUp } from "./EvidenceFollowUp.ts"
import { EvidenceRepo } from "./EvidenceRepo.ts"
import { InvoiceChanges } from "./InvoiceChanges.ts"

export type { EvidenceIdentity, EvidenceInvalidation, EvidenceResult, ObservedPayment } from "./EvidenceDecision.ts"

export class EvidenceRejected extends Data.TaggedError("EvidenceRejected")<{ readonly reason: string }> {}

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
  static readonly layerWithoutDependencies = Layer.effect(
    PaymentEvidence,
    Effect.gen(function*() {
      const repo = yield* EvidenceRepo
      const followUp = yield* EvidenceFollowUp
      const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))
      return { record: makeRecord(repo, now), invalidate: makeInvalidate(repo, followUp, now), settleReorg: makeSettleReorg(repo, followUp, now) }
    })
  )

  /** With the evidence repository (publishing on the bus); the evidence follow-up comes from the refunds above. */
  static readonly layer = PaymentEvidence.layerWithoutDependencies.pipe(Layer.provide(InvoiceChanges.publishingEvidenceRepo))
}

type Repo = EvidenceRepo["Service"]
type Now = Effect.Effect<Date>
type Write = Extract<EvidenceDecision, { _tag: "Write" }>

/** The decision unless it refuses (then the failure). */
const acceptedOrFail = (decision: EvidenceDecision): Effect.Effect<Exclude<EvidenceDecision, { _tag: "Rejected" }>, EvidenceRejected> =>
  decision._tag === "Rejected" ? Effect.fail(new EvidenceRejected({ reason: decision.reason })) : Effect.succeed(decision)

/** Observations: optimistic first (read, decide, write if the invoice is unchanged), else again under the invoice's lock. */
const makeRecord = (repo: Repo, now: Now) => {
  /** Under the invoice lock: the authoritative path, taken when the invoice changed since it was read. */
  const recordLocked = (observed: ObservedPayment) =>
    repo.withTransaction(Effect.gen(function*() {
      const outcome = yield* acceptedOrFail(decideObservation(Option.getOrUndefined(yield* repo.lockForEvidence(observed.paymentOptionId)), observed, yield* now))
      if (outcome._tag === "Unchanged") return outcome.result
      if ((yield* repo.saveWith(outcome.write, outcome.invoice, outcome.events)) === 1) return { invoice: outcome.invoice, payment: outcome.payment }
      // The output already matched elsewhere (or is counted under its pre-0015 EVM identity): the
      // rejection rolls back the transaction.
      if (outcome.isNew) return yield* new EvidenceRejected({ reason: ALREADY_MATCHED })
      return yield* Effect.die(new Error(`payment ${outcome.payment.id} vanished under the invoice lock`))
    }))

  return Effect.fn("PaymentEvidence.record")(function*(observed: ObservedPayment) {
    const problem = observationProblem(observed)
    if (problem !== undefined) return yield* new EvidenceRejected({ reason: problem })
    // Optimistic first: read, decide, and write in one statement that applies only if the invoice
    // is still as read (two round trips, no transaction held open). Anything else takes the lock.
    const state = Option.getOrUndefined(yield* repo.readForEvidence(observed.paymentOptionId))
    const outcome = yield* acceptedOrFail(decideObservation(state, observed, yield* now))
    if (outcome._tag === "Unchanged") return outcome.result
    if (yield* repo.saveIfUnchanged(state!.version, outcome.write, outcome.invoice, outcome.events)) return { invoice: outcome.invoice, payment: outcome.payment }
    return yield* recordLocked(observed)
  })
}

/** The invoice, its payments and the identified evidence's row, read under the invoice's lock (inside a transaction). */
const lockEvidence = (repo: Repo, identity: EvidenceIdentity, invoiceId: string) =>
  Effect.gen(function*() {
    const invoice = yield* repo.lockForUpdate(invoiceId)
    if (Option.isNone(invoice)) return yield* new EvidenceRejected({ reason: "unknown invoice" })
    const payment = yield* repo.lockPayment(identity.network, identity.transactionHash, identity.outputIndex)
    if (Option.isNone(payment)) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
    return { invoice: invoice.value, payment: payment.value, payments: yield* repo.listPayments(invoiceId) } satisfies EvidenceOfInvoice
  })

/** Runs `decide` on the identified evidence under its invoice's lock and saves what it writes. */
const underInvoiceLock = (
  repo: Repo,
  identity: EvidenceIdentity,
  decide: (evidence: EvidenceOfInvoice) => Effect.Effect<EvidenceDecision>,
  saved: (evidence: EvidenceOfInvoice, write: Write, written: boolean) => Effect.Effect<EvidenceResult>
) =>
  Effect.gen(function*() {
    const invoiceId = yield* repo.invoiceIdOfPayment(identity.network, identity.transactionHash, identity.outputIndex)
    if (Option.isNone(invoiceId)) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
    return yield* repo.withTransaction(Effect.gen(function*() {
      const evidence = yield* lockEvidence(repo, identity, invoiceId.value)
      const outcome = yield* acceptedOrFail(yield* decide(evidence))
      if (outcome._tag === "Unchanged") return outcome.result
      return yield* saved(evidence, outcome, (yield* repo.saveWith(outcome.write, outcome.invoice, outcome.events)) === 1)
    }))
  })

const makeInvalidate = (repo: Repo, followUp: EvidenceFollowUp["Service"], now: Now) =>
  Effect.fn("PaymentEvidence.invalidate")(function*(invalidation: EvidenceInvalidation) {
    return yield* underInvoiceLock(
      repo,
      invalidation,
      (evidence) => Effect.map(now, (at) => decideInvalidation(evidence, invalidation, at)),
      (evidence, outcome, written) =>
        Effect.gen(function*() {
          if (!written) return yield* Effect.die(new Error(`payment ${evidence.payment.id} vanished under the invoice lock`))
          if (evidence.invoice.status === "confirmed") yield* logConfirmedInvalidation(evidence.invoice, invalidation, outcome)
          yield* followUp.afterCoverageLoss(outcome.invoice.id, "invalidation")
          return { invoice: outcome.invoice, payment: outcome.payment }
        })
    )
  })

const logConfirmedInvalidation = (invoice: InvoiceRecord, invalidation: EvidenceInvalidation, outcome: Write) =>
  Effect.logWarning("Evidence of a confirmed invoice was invalidated; the invoice stays confirmed").pipe(
    Effect.annotateLogs({
      invoiceId: invoice.id,
      transactionHash: invalidation.transactionHash,
      judgedAfterReorgSettles: outcome.write._tag === "InvalidatePayment" && outcome.write.reorgPoint !== null
    })
  )

const makeSettleReorg = (repo: Repo, followUp: EvidenceFollowUp["Service"], now: Now) =>
  Effect.fn("PaymentEvidence.settleReorg")(function*(identity: EvidenceIdentity) {
    return yield* underInvoiceLock(
      repo,
      identity,
      (evidence) => Effect.map(now, (at) => decideReorgSettlement(evidence, at)),
      // No row written (observed again, or judged by another instance): nothing changes.
      (evidence, outcome, written) =>
        written
          ? Effect.as(followUp.afterCoverageLoss(outcome.invoice.id, "invalidation"), { invoice: outcome.invoice, payment: evidence.payment })
          : Effect.succeed({ invoice: evidence.invoice, payment: evidence.payment })
    )
  })
