import type { SqlClient } from "effect/sql"
import { usdValueOf } from "../domain/Evidence.ts"
import type { PaymentRecord } from "../domain/Invoice.ts"
import { isLateEvidence } from "../lifecycle/Settlement.ts"
import type { EvidenceState, GuardedWrite } from "./InvoiceRepo.ts"
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
    readonly write: GuardedWrite
  }

/** What one observation changes, decided from the invoice and its payments as read. */
export const decideChange = (sql: SqlClient.SqlClient, state: EvidenceState, observed: ObservedPayment, at: Date): Change => {
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
      write: (guard) =>
        sql`UPDATE payments SET confirmations = ${observed.confirmations}, confirmed_at = ${confirmedAt},
          invalidated_at = NULL, invalidation_reason = NULL,
          ${
          observed.inMempool === true
            // Back in the mempool (its block orphaned, or it was rebroadcast): no block until mined again.
            ? sql`block_height = NULL, block_hash = NULL, seen_in_mempool = true`
            : sql`block_height = COALESCE(${observed.blockHeight?.toString() ?? null}::bigint, block_height),
          block_hash = COALESCE(${observed.blockHash ?? null}::text, block_hash)`
        }
          WHERE id = ${existing.id} AND ${guard} RETURNING 1`
    }
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
    quotedAtomic: option.quotedAtomic,
    confirmations: observed.confirmations,
    late,
    observedAt: observed.observedAt,
    confirmedAt: reachedThreshold ? at : null,
    invalidatedAt: null,
    invalidationReason: null
  }
  const row = {
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
    quoted_atomic: payment.quotedAtomic.toString(),
    confirmations: payment.confirmations,
    late: payment.late,
    observed_at: payment.observedAt,
    confirmed_at: payment.confirmedAt,
    block_height: observed.blockHeight?.toString() ?? null,
    block_hash: observed.blockHash ?? null,
    seen_in_mempool: observed.inMempool === true,
    // What reaches a forwarder is swept on to the merchant's recipient once confirmed.
    sweep_status: option.railType === "wallet_contract" ? "pending" : null
  }
  const columns = Object.keys(row).join(", ")
  return {
    _tag: "Write",
    payment,
    isNew: true,
    payments: [...payments, payment],
    latestIsLate: late,
    // Typed by the table's row type, so the insert can select its values under a guard.
    write: (guard) =>
      sql`INSERT INTO payments (${sql.literal(columns)})
        SELECT ${sql.literal(columns)} FROM json_populate_record(NULL::payments, ${JSON.stringify(row)}::json) WHERE ${guard}
        ON CONFLICT (network, transaction_hash, output_index) DO NOTHING RETURNING 1`
  }
}
