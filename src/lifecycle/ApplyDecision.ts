import type { InvoiceRecord, OutboxEvent } from "../domain/Invoice.ts"
import type { ExceptionCloseAction } from "../domain/Statuses.ts"
import type { Decision } from "./Lifecycle.ts"

/** Details a decision may need besides the event itself. */
export interface DecisionContext {
  readonly now: Date
  readonly note?: string | undefined
  readonly closeAction?: ExceptionCloseAction | undefined
}

/**
 * Applies a lifecycle decision to the invoice record: the new status and exception state and
 * the stamped timestamps (each set once), plus the outbox events to write in the same transaction.
 */
export const applyDecision = (
  invoice: InvoiceRecord,
  decision: Decision,
  context: DecisionContext
): { readonly invoice: InvoiceRecord; readonly events: ReadonlyArray<OutboxEvent> } => {
  let next: InvoiceRecord = {
    ...invoice,
    status: decision.state.status,
    exceptionType: decision.state.exceptionType,
    exceptionStatus: decision.state.exceptionStatus
  }
  const events: Array<OutboxEvent> = []
  for (const effect of decision.effects) {
    switch (effect.kind) {
      case "emit":
        events.push({ invoiceId: invoice.id, merchantId: invoice.merchantId, event: effect.event })
        break
      case "stamp":
        if (next[effect.field] === null) next = { ...next, [effect.field]: context.now }
        break
      case "recordOutOfBandNote":
        next = { ...next, paidOutOfBandNote: context.note ?? null }
        break
      case "recordExceptionClose":
        next = {
          ...next,
          exceptionAction: context.closeAction ?? "mark_paid_out_of_band",
          exceptionNote: context.note ?? null
        }
        break
      case "openException":
        // A new exception (after a closed one, too) starts unreviewed: the close's fields go.
        next = { ...next, exceptionAction: null, exceptionNote: null, exceptionClosedAt: null }
        break
    }
  }
  return { invoice: next, events }
}
