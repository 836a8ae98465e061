import { tally } from "../domain/Evidence.ts"
import type { InvoiceRecord, OutboxEvent, PaymentRecord } from "../domain/Invoice.ts"
import { applyDecision } from "./ApplyDecision.ts"
import type { InvoiceEvent } from "./InvoiceMachine.ts"
import { decide } from "./Lifecycle.ts"

export const lifecycleStateOf = (invoice: InvoiceRecord) => ({
  status: invoice.status,
  exceptionType: invoice.exceptionType,
  exceptionStatus: invoice.exceptionStatus
})

export interface Settled {
  readonly invoice: InvoiceRecord
  readonly events: ReadonlyArray<OutboxEvent>
}

/** Applies lifecycle events in order, skipping those the machine does not take. */
export const applyEvents = (invoice: InvoiceRecord, events: ReadonlyArray<InvoiceEvent>, now: Date): Settled => {
  let next = invoice
  const outbox: Array<OutboxEvent> = []
  for (const event of events) {
    const decision = decide(lifecycleStateOf(next), event)
    if (decision === undefined) continue
    const applied = applyDecision(next, decision, { now })
    next = applied.invoice
    outbox.push(...applied.events)
  }
  return { invoice: next, events: outbox }
}

/** What changed in the evidence that `settle` judges. */
export interface EvidenceChangeKind {
  /** The changed payment is late (see isLateEvidence). */
  readonly late: boolean
  /** The change is a newly observed late payment (not a confirmation or an invalidation of a known one). */
  readonly newLatePayment?: boolean | undefined
  /** A reorganisation that invalidated some of the evidence is over (see REORG_SETTLED). */
  readonly reorgSettled?: boolean | undefined
}

/**
 * Recomputes an invoice from all of its payment evidence (in observation order) and lets the
 * machine decide. When the deadline has passed, late evidence is judged after the expiry and
 * on-time evidence before it.
 */
export const settle = (
  invoice: InvoiceRecord,
  payments: ReadonlyArray<PaymentRecord>,
  now: Date,
  change: EvidenceChangeKind
): Settled => {
  const facts = tally(invoice.amountMicros, payments)
  const latestCounted = payments.filter((payment) => payment.invalidatedAt === null).at(-1)
  const latestObserved = payments.at(-1)
  const recomputed: InvoiceRecord = {
    ...invoice,
    receivedMicros: facts.receivedMicros,
    confirmedMicros: facts.confirmedMicros,
    confirmations: facts.confirmations,
    // The spec's words: the hash of invoice-counted evidence only (an invalidated one names no
    // payment of the invoice), but the option and time of the latest observed payment event, invalidated or not.
    lastTransactionHash: latestCounted?.transactionHash ?? null,
    lastPaymentOptionId: latestObserved?.paymentOptionId ?? null,
    lastPaymentObservedAt: latestObserved?.observedAt ?? null
  }
  const evidence: InvoiceEvent = {
    type: "EVIDENCE",
    onTime: facts.onTime,
    total: facts.total,
    newLatePayment: change.late && change.newLatePayment === true
  }
  // Late evidence was observed after the deadline, so the deadline has passed even if the clock
  // of this process (or the sweeper) has not caught up yet.
  const deadlinePassed = change.late || now.getTime() > invoice.timing.payableUntilAt.getTime()
  const events: ReadonlyArray<InvoiceEvent> = !deadlinePassed
    ? [evidence]
    : change.late
    ? [{ type: "DEADLINE_PASSED" }, evidence]
    : [evidence, { type: "DEADLINE_PASSED" }]
  return applyEvents(recomputed, change.reorgSettled === true ? [...events, { type: "REORG_SETTLED", total: facts.total }] : events, now)
}

/** The timing rule for new evidence: late after payableUntilAt, and always on expired or voided invoices. */
export const isLateEvidence = (invoice: InvoiceRecord, observedAt: Date): boolean =>
  invoice.status === "expired" || invoice.status === "voided" ||
  observedAt.getTime() > invoice.timing.payableUntilAt.getTime()
