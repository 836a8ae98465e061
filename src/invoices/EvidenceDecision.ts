import { usdValueOf } from "../domain/Evidence.ts"
import { PaymentId } from "../domain/Ids.ts"
import type { InvoiceRecord, OutboxEvent, PaymentRecord } from "../domain/Invoice.ts"
import { type EvidenceChangeKind, isLateEvidence, settle } from "../lifecycle/Settlement.ts"
import type { EvidenceOption, EvidenceState } from "./EvidenceRepo.ts"
import type { PaymentWrite } from "./PaymentWrite.ts"

/**
 * What one piece of evidence does to its invoice, decided in one place and without I/O: from the
 * invoice and its payments as read, the payment row to write (as data) and the invoice and outbox
 * events the lifecycle makes of it. PaymentEvidence only reads, applies the decision and retries.
 */

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
  /** Who paid: EVM the Transfer's `from`, Solana the owner of the paying token account; absent for bitcoin. */
  readonly payerAddress?: string | undefined
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

export interface EvidenceResult {
  readonly invoice: InvoiceRecord
  readonly payment: PaymentRecord
}

/** The decision: a refusal, nothing to do (with the answer), or one payment write and the invoice after it. */
export type EvidenceDecision =
  | { readonly _tag: "Rejected"; readonly reason: string }
  | { readonly _tag: "Unchanged"; readonly result: EvidenceResult }
  | {
    readonly _tag: "Write"
    readonly write: PaymentWrite
    /** The payment as written. */
    readonly payment: PaymentRecord
    /** A payment row to insert (not a change to a known one). */
    readonly isNew: boolean
    /** The invoice recomputed from its payments after the write, as the lifecycle judged it. */
    readonly invoice: InvoiceRecord
    readonly events: ReadonlyArray<OutboxEvent>
  }

export const ALREADY_MATCHED = "this transaction output is already matched to another payment option"

/** Why an observation is refused before its invoice is read, or undefined. */
export const observationProblem = (observed: ObservedPayment): string | undefined =>
  observed.amountAtomic <= 0n
    ? "amount must be positive"
    : !Number.isInteger(observed.outputIndex) || observed.outputIndex < 0
    ? "output index must be a non-negative integer"
    : undefined

/** Payments in observation order (ties by id), as the lifecycle judges them. */
const inObservationOrder = (payments: ReadonlyArray<PaymentRecord>) =>
  [...payments].sort((a, b) => a.observedAt.getTime() - b.observedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))

/** The Write decision: the payments with `payment` in place of its row, settled by the lifecycle. */
const writing = (
  invoice: InvoiceRecord,
  payments: ReadonlyArray<PaymentRecord>,
  payment: PaymentRecord,
  write: PaymentWrite,
  at: Date,
  change: EvidenceChangeKind & { readonly isNew: boolean }
): EvidenceDecision => {
  const after = change.isNew ? [...payments, payment] : payments.map((known) => (known.id === payment.id ? payment : known))
  const settled = settle(invoice, inObservationOrder(after), at, change)
  return { _tag: "Write", write, payment, isNew: change.isNew, invoice: settled.invoice, events: settled.events }
}

/** A known payment reported again: new confirmations, a new block, or back after an invalidation (re-included). */
const observedAgain = (state: EvidenceState, existing: PaymentRecord, observed: ObservedPayment, at: Date): EvidenceDecision => {
  const { invoice, option, payments } = state
  if (existing.paymentOptionId !== option.id) return { _tag: "Rejected", reason: ALREADY_MATCHED }
  // A mempool sighting of evidence that counts (already seen there, or mined since) changes nothing.
  if (observed.inMempool === true && existing.invalidatedAt === null) return { _tag: "Unchanged", result: { invoice, payment: existing } }
  // Evidence that comes back after an invalidation (re-mined after a reorg) confirms afresh.
  const reachedThreshold = observed.confirmations >= option.requiredConfirmations
  const confirmedAt = (existing.invalidatedAt === null ? existing.confirmedAt : null) ?? (reachedThreshold ? at : null)
  const unchanged = existing.confirmations === observed.confirmations && existing.invalidatedAt === null && existing.confirmedAt === confirmedAt
  if (unchanged) return { _tag: "Unchanged", result: { invoice, payment: existing } }
  const updated: PaymentRecord = { ...existing, confirmations: observed.confirmations, confirmedAt, invalidatedAt: null, invalidationReason: null }
  const write: PaymentWrite = {
    _tag: "UpdateConfirmations",
    paymentId: existing.id,
    confirmations: observed.confirmations,
    confirmedAt,
    placement: observed.inMempool === true
      ? { _tag: "Mempool" }
      : { _tag: "Block", height: observed.blockHeight ?? null, hash: observed.blockHash ?? null }
  }
  return writing(invoice, payments, updated, write, at, { isNew: false, late: existing.late, newLatePayment: false })
}

/** The payment row a first observation creates, valued at the option's quote. */
const newPayment = (invoice: InvoiceRecord, option: EvidenceOption, observed: ObservedPayment, at: Date): PaymentRecord => ({
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
  late: isLateEvidence(invoice, observed.observedAt),
  observedAt: observed.observedAt,
  confirmedAt: observed.confirmations >= option.requiredConfirmations ? at : null,
  invalidatedAt: null,
  invalidationReason: null
})

/** What one observation does, decided from the invoice of its option and the invoice's payments as read. */
export const decideObservation = (state: EvidenceState | undefined, observed: ObservedPayment, at: Date): EvidenceDecision => {
  if (state === undefined) return { _tag: "Rejected", reason: "unknown payment option" }
  const { invoice, option, payments } = state
  const existing = payments.find((payment) =>
    payment.network === option.network && payment.transactionHash === observed.transactionHash && payment.outputIndex === observed.outputIndex
  )
  if (existing !== undefined) return observedAgain(state, existing, observed, at)
  const payment = newPayment(invoice, option, observed, at)
  const write: PaymentWrite = {
    _tag: "InsertPayment",
    payment,
    blockHeight: observed.blockHeight ?? null,
    blockHash: observed.blockHash ?? null,
    seenInMempool: observed.inMempool === true,
    sweepPending: option.railType === "wallet_contract",
    payerAddress: observed.payerAddress ?? null
  }
  return writing(invoice, payments, payment, write, at, { isNew: true, late: payment.late, newLatePayment: payment.late })
}

/** The invoice of some evidence, its payments and that evidence's row, all as read under the invoice's lock. */
export interface EvidenceOfInvoice {
  readonly invoice: InvoiceRecord
  readonly payments: ReadonlyArray<PaymentRecord>
  readonly payment: PaymentRecord
}

/**
 * What an invalidation does. A confirmed invoice invalidated by a watcher's reorganisation (with a
 * reorg point) is judged only once it settles (decideReorgSettlement); anything else at once.
 */
export const decideInvalidation = ({ invoice, payment, payments }: EvidenceOfInvoice, invalidation: EvidenceInvalidation, at: Date): EvidenceDecision => {
  if (payment.invalidatedAt !== null) return { _tag: "Unchanged", result: { invoice, payment } }
  const deferred = invoice.status === "confirmed" && invalidation.reorgPoint !== undefined
  const invalidated: PaymentRecord = { ...payment, invalidatedAt: at, invalidationReason: invalidation.reason }
  const write: PaymentWrite = {
    _tag: "InvalidatePayment",
    paymentId: payment.id,
    at,
    reason: invalidation.reason,
    reorgPoint: deferred ? invalidation.reorgPoint ?? null : null
  }
  return writing(invoice, payments, invalidated, write, at, { isNew: false, late: payment.late, reorgSettled: !deferred })
}

/** The deferred judgement of a reorganisation: a confirmed invoice still short opens its exception (the write applies only while it waits). */
export const decideReorgSettlement = ({ invoice, payment, payments }: EvidenceOfInvoice, at: Date): EvidenceDecision =>
  writing(invoice, payments, payment, { _tag: "SettleReorg", paymentId: payment.id }, at, { isNew: false, late: payment.late, reorgSettled: true })
