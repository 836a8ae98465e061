import type { ExceptionCloseAction } from "../lifecycle/InvoiceMachine.ts"
import type { Decision, ExceptionStatus, ExceptionType, InvoiceStatus, WebhookEventName } from "../lifecycle/Lifecycle.ts"
import type { Micros } from "./Money.ts"
import type { ResolvedTiming } from "./Timing.ts"

export type RailType = "wallet_contract" | "address_transfer"

export interface InvoiceRecord {
  readonly id: string
  readonly merchantId: string
  readonly amountMicros: Micros
  readonly status: InvoiceStatus
  readonly timing: ResolvedTiming
  readonly productName: string | null
  readonly issuedBy: string | null
  readonly billTo: string | null
  readonly redirectUrl: string | null
  readonly merchantReference: string | null
  readonly customerId: string | null
  readonly customerEmail: string | null
  readonly metadata: Record<string, unknown> | null
  readonly defaultPaymentOptionId: string | null
  readonly lastPaymentOptionId: string | null
  readonly lastTransactionHash: string | null
  readonly receivedMicros: Micros
  readonly confirmedMicros: Micros
  readonly confirmations: number
  readonly paymentDetectedAt: Date | null
  readonly confirmedAt: Date | null
  readonly paidOutOfBandAt: Date | null
  readonly paidOutOfBandNote: string | null
  readonly voidedAt: Date | null
  readonly exceptionType: ExceptionType | null
  readonly exceptionStatus: ExceptionStatus | null
  readonly exceptionAction: ExceptionCloseAction | null
  readonly exceptionNote: string | null
  readonly exceptionClosedAt: Date | null
  readonly createdAt: Date
  readonly lastPaymentObservedAt: Date | null
}

export interface PaymentOptionRecord {
  readonly id: string
  readonly invoiceId: string
  readonly railType: RailType
  readonly assetCode: string
  readonly network: string
  readonly tokenContract: string | null
  readonly decimals: number
  readonly quotedAtomic: bigint
  readonly quoteRate: string
  readonly destinationAddress: string | null
  readonly paymentUri: string | null
  readonly qrCode: string | null
  readonly status: "active"
  readonly isDefault: boolean
  readonly optionPayload: Record<string, unknown> | null
  readonly requiredConfirmations: number
}

export interface PaymentRecord {
  readonly id: string
  readonly invoiceId: string
  readonly paymentOptionId: string
  readonly assetCode: string
  readonly network: string
  readonly destinationAddress: string | null
  readonly transactionHash: string | null
  readonly outputIndex: number
  readonly decimals: number
  readonly amountAtomic: bigint
  readonly observedTotalAtomic: bigint
  readonly usdMicros: Micros
  /** The option's quote the payment is valued against (with the other payments of its option). */
  readonly quotedAtomic: bigint
  readonly confirmations: number
  readonly late: boolean
  readonly observedAt: Date
  readonly confirmedAt: Date | null
  readonly invalidatedAt: Date | null
  readonly invalidationReason: string | null
}

export interface OutboxEvent {
  readonly invoiceId: string
  readonly merchantId: string
  readonly event: WebhookEventName
}

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
        break
    }
  }
  return { invoice: next, events }
}
