import { Clock, Context, Data, Effect, Layer } from "effect"
import { SqlClient, type Statement } from "effect/sql"
import { usdValueOf } from "../domain/Evidence.ts"
import type { InvoiceRecord, PaymentRecord } from "../domain/Invoice.ts"
import { isLateEvidence, settle } from "../lifecycle/Settlement.ts"
import { paymentFromRow } from "./InvoiceRows.ts"
import { InvoiceRepo } from "./InvoiceRepo.ts"

/** One observed transfer to a payment option: what every chain watcher reports. */
export interface ObservedPayment {
  readonly paymentOptionId: string
  readonly transactionHash: string
  /** Output index (bitcoin), log index (EVM) or instruction index (solana) within the transaction. */
  readonly outputIndex: number
  readonly amountAtomic: bigint
  readonly confirmations: number
  readonly observedAt: Date
  readonly destinationAddress?: string | null | undefined
  readonly observedTotalAtomic?: bigint | undefined
}

/** Earlier evidence that no longer counts (a chain reorganisation dropped it). */
export interface EvidenceInvalidation {
  readonly network: string
  readonly transactionHash: string
  readonly outputIndex: number
  readonly reason: string
}

export class EvidenceRejected extends Data.TaggedError("EvidenceRejected")<{ readonly reason: string }> {}

export interface EvidenceResult {
  readonly invoice: InvoiceRecord
  readonly payment: PaymentRecord
}

type Row = Record<string, unknown>

/**
 * The single entry point for payment evidence (chain watchers and the simulator). Idempotent per
 * network + transaction + output index; serialised per invoice by a row lock; recomputes the
 * invoice's amounts and lets the lifecycle machine decide the status, writing the outbox events in
 * the same transaction.
 */
export class PaymentEvidence extends Context.Service<PaymentEvidence, {
  readonly record: (payment: ObservedPayment) => Effect.Effect<EvidenceResult, EvidenceRejected>
  readonly invalidate: (invalidation: EvidenceInvalidation) => Effect.Effect<EvidenceResult, EvidenceRejected>
}>()("Invoices/PaymentEvidence") {
  static readonly layer = Layer.effect(
    PaymentEvidence,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const repo = yield* InvoiceRepo
      const now = Clock.currentTimeMillis.pipe(Effect.map((millis) => new Date(millis)))

      const findPayment = (network: string, transactionHash: string, outputIndex: number) =>
        sql<Row>`SELECT * FROM payments WHERE network = ${network} AND transaction_hash = ${transactionHash}
          AND output_index = ${outputIndex} FOR UPDATE`.pipe(
          Effect.map((rows) => (rows[0] === undefined ? undefined : paymentFromRow(rows[0]))),
          Effect.orDie
        )

      /**
       * Recomputes the invoice from its payments (as they are after `write`), runs the lifecycle and
       * saves it in one statement with `write`, the payment row's change; returns the saved
       * invoice, or undefined when `write` touched no row (the caller fails, rolling back).
       */
      const settleAndSaveWith = (write: Statement.Fragment, invoice: InvoiceRecord, payments: ReadonlyArray<PaymentRecord>, latestIsLate: boolean) =>
        Effect.gen(function*() {
          const settled = yield* settlement(invoice, payments, latestIsLate)
          const written = yield* repo.saveWith(write, settled.invoice, settled.events)
          return written === 1 ? settled.invoice : undefined
        })

      const settlement = (invoice: InvoiceRecord, payments: ReadonlyArray<PaymentRecord>, latestIsLate: boolean) =>
        Effect.map(now, (at) => {
          const ordered = [...payments].sort((a, b) => a.observedAt.getTime() - b.observedAt.getTime() || (a.id < b.id ? -1 : a.id > b.id ? 1 : 0))
          return settle(invoice, ordered, at, latestIsLate)
        })

      const record = Effect.fn("PaymentEvidence.record")(function*(observed: ObservedPayment) {
        if (observed.amountAtomic <= 0n) return yield* new EvidenceRejected({ reason: "amount must be positive" })
        if (!Number.isInteger(observed.outputIndex) || observed.outputIndex < 0) {
          return yield* new EvidenceRejected({ reason: "output index must be a non-negative integer" })
        }
        return yield* repo.withTransaction(Effect.gen(function*() {
          const locked = yield* repo.lockForEvidence(observed.paymentOptionId)
          if (locked === undefined) return yield* new EvidenceRejected({ reason: "unknown payment option" })
          const { invoice, option, payments } = locked
          const at = yield* now
          const reachedThreshold = observed.confirmations >= option.requiredConfirmations
          const existing = payments.find((payment) =>
            payment.network === option.network && payment.transactionHash === observed.transactionHash &&
            payment.outputIndex === observed.outputIndex
          )
          if (existing !== undefined) {
            if (existing.paymentOptionId !== option.id) {
              return yield* new EvidenceRejected({ reason: "this transaction output is already matched to another payment option" })
            }
            const confirmedAt = existing.confirmedAt ?? (reachedThreshold ? at : null)
            const unchanged = existing.confirmations === observed.confirmations && existing.invalidatedAt === null &&
              existing.confirmedAt === confirmedAt
            if (unchanged) return { invoice, payment: existing }
            const updated: PaymentRecord = { ...existing, confirmations: observed.confirmations, confirmedAt, invalidatedAt: null, invalidationReason: null }
            const saved = yield* settleAndSaveWith(
              sql`UPDATE payments SET confirmations = ${observed.confirmations}, confirmed_at = ${confirmedAt},
                invalidated_at = NULL, invalidation_reason = NULL WHERE id = ${existing.id} RETURNING 1`,
              invoice,
              payments.map((payment) => (payment.id === existing.id ? updated : payment)),
              existing.late
            )
            if (saved === undefined) return yield* Effect.die(new Error(`payment ${existing.id} vanished under the invoice lock`))
            return { invoice: saved, payment: updated }
          }
          const late = isLateEvidence(invoice, observed.observedAt)
          const payment: PaymentRecord = {
            id: crypto.randomUUID(),
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
            confirmations: observed.confirmations,
            late,
            observedAt: observed.observedAt,
            confirmedAt: reachedThreshold ? at : null,
            invalidatedAt: null,
            invalidationReason: null
          }
          const insert = sql`INSERT INTO payments ${
            sql.insert({
              id: payment.id,
              invoice_id: payment.invoiceId,
              payment_option_id: payment.paymentOptionId,
              asset_code: payment.assetCode,
              network: payment.network,
              destination_address: payment.destinationAddress,
              transaction_hash: payment.transactionHash,
              output_index: payment.outputIndex,
              decimals: payment.decimals,
              amount_atomic: payment.amountAtomic.toString(),
              observed_total_atomic: payment.observedTotalAtomic.toString(),
              usd_micros: payment.usdMicros.toString(),
              confirmations: payment.confirmations,
              late: payment.late,
              observed_at: payment.observedAt,
              confirmed_at: payment.confirmedAt
            })
          } ON CONFLICT (network, transaction_hash, output_index) DO NOTHING RETURNING 1`
          // The output already matched elsewhere: the rejection rolls back the invoice update made with it.
          const saved = yield* settleAndSaveWith(insert, invoice, [...payments, payment], late)
          if (saved === undefined) {
            return yield* new EvidenceRejected({ reason: "this transaction output is already matched to another payment option" })
          }
          return { invoice: saved, payment }
        }))
      })

      const invalidate = Effect.fn("PaymentEvidence.invalidate")(function*(invalidation: EvidenceInvalidation) {
        const rows = yield* sql<Row>`SELECT invoice_id FROM payments WHERE network = ${invalidation.network}
          AND transaction_hash = ${invalidation.transactionHash} AND output_index = ${invalidation.outputIndex}`.pipe(Effect.orDie)
        if (rows[0] === undefined) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
        return yield* repo.withTransaction(Effect.gen(function*() {
          const invoice = yield* repo.lockForUpdate(String(rows[0].invoiceId))
          if (invoice === undefined) return yield* new EvidenceRejected({ reason: "unknown invoice" })
          const existing = yield* findPayment(invalidation.network, invalidation.transactionHash, invalidation.outputIndex)
          if (existing === undefined) return yield* new EvidenceRejected({ reason: "unknown payment evidence" })
          if (existing.invalidatedAt !== null) return { invoice, payment: existing }
          const at = yield* now
          if (invoice.status === "confirmed") {
            yield* Effect.logWarning("Evidence of a confirmed invoice was invalidated; the invoice stays confirmed").pipe(
              Effect.annotateLogs({ invoiceId: invoice.id, transactionHash: invalidation.transactionHash })
            )
          }
          const invalidated: PaymentRecord = { ...existing, invalidatedAt: at, invalidationReason: invalidation.reason }
          const payments = yield* repo.listPayments(invoice.id)
          const saved = yield* settleAndSaveWith(
            sql`UPDATE payments SET invalidated_at = ${at}, invalidation_reason = ${invalidation.reason}
              WHERE id = ${existing.id} RETURNING 1`,
            invoice,
            payments.map((payment) => (payment.id === existing.id ? invalidated : payment)),
            existing.late
          )
          if (saved === undefined) return yield* Effect.die(new Error(`payment ${existing.id} vanished under the invoice lock`))
          return { invoice: saved, payment: invalidated }
        }))
      })

      return { record, invalidate }
    })
  )
}
