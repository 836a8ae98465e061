import { and, or, setup, stateIn } from "xstate"
import type { OnTimeLevel, TotalLevel } from "../domain/Evidence.ts"
import type { ExceptionCloseAction, WebhookEventName } from "../domain/Statuses.ts"

export type InvoiceEvent =
  | { readonly type: "VOID" }
  | { readonly type: "RECORD_PAYMENT" }
  | {
    readonly type: "EVIDENCE"
    readonly onTime: OnTimeLevel
    readonly total: TotalLevel
    /** The change is a newly observed late payment, not a confirmation or invalidation of a known one. */
    readonly newLatePayment: boolean
  }
  | { readonly type: "DEADLINE_PASSED" }
  | { readonly type: "CLOSE_EXCEPTION"; readonly action: ExceptionCloseAction }
  /**
   * A reorganisation that invalidated evidence of the invoice has settled: the watcher processed the
   * network's required confirmations beyond its reorg point, and `total` is what is still counted.
   */
  | { readonly type: "REORG_SETTLED"; readonly total: TotalLevel }

export type StampedField =
  | "paymentDetectedAt"
  | "confirmedAt"
  | "paidOutOfBandAt"
  | "voidedAt"
  | "exceptionClosedAt"

const onTimeIs = (level: OnTimeLevel) => ({ type: "onTimeIs" as const, params: { level } })
const emit = (event: WebhookEventName) => ({ type: "emit" as const, params: { event } })
const stamp = (field: StampedField) => ({ type: "stamp" as const, params: { field } })

const toPartiallyPaid = { target: "partially_paid", guard: onTimeIs("partial"), actions: [emit("invoice_partially_paid")] }
const toPaymentDetected = {
  target: "payment_detected",
  guard: onTimeIs("sufficient"),
  actions: [stamp("paymentDetectedAt"), emit("invoice_payment_detected")]
}
const toConfirmed = {
  target: "confirmed",
  guard: onTimeIs("confirmed"),
  actions: [stamp("paymentDetectedAt"), stamp("confirmedAt"), emit("invoice_confirmed")]
}
const toAwaiting = { target: "awaiting_payment", guard: onTimeIs("none") }
const recordPayment = {
  target: "paid_out_of_band",
  actions: [stamp("paidOutOfBandAt"), { type: "recordOutOfBandNote" as const }, emit("invoice_payment_recorded")]
}
const closeException = [stamp("exceptionClosedAt"), { type: "recordExceptionClose" as const }, emit("invoice_exception_closed")]
/** Closing an exception moves an expired or voided invoice when the action says so. */
const closeOnLateStatus = [
  {
    target: "confirmed",
    guard: and([{ type: "actionIs", params: { action: "accept_late_payment" } }, stateIn({ exception: { open: "late_payment" } })]),
    actions: [stamp("confirmedAt"), emit("invoice_confirmed")]
  },
  {
    target: "paid_out_of_band",
    guard: and([{ type: "actionIs", params: { action: "mark_paid_out_of_band" } }, stateIn({ exception: "open" })]),
    actions: [stamp("paidOutOfBandAt"), { type: "recordOutOfBandNote" as const }, emit("invoice_payment_recorded")]
  }
]
const inLateStatus = or([stateIn({ status: "expired" }), stateIn({ status: "voided" })])
const openException = (exceptionType: "late_payment" | "partial_payment") => [
  { type: "openException" as const, params: { exceptionType } },
  emit("invoice_exception_opened")
]
/**
 * Late evidence on an expired or voided invoice opens an exception, its type by the total. After a
 * closed one only a newly observed late payment does: a confirmation of a payment the merchant has
 * already reviewed is not new money to review.
 */
const openOnLateEvidence = (onlyNewPayment: boolean) =>
  (["late_payment", "partial_payment"] as const).map((exceptionType) => ({
    target: `open.${exceptionType}`,
    guard: and([
      inLateStatus,
      ...(onlyNewPayment ? [{ type: "newLatePayment" as const }] : []),
      { type: "totalIs", params: { level: exceptionType === "late_payment" ? "sufficient" : "partial" } }
    ]),
    actions: openException(exceptionType)
  }))

/**
 * Reorg honesty: confirmed is final, so evidence that no longer covers the amount once the
 * reorganisation has settled (the same transaction was not mined again) is put before the merchant
 * instead of undone. Not on the invalidation itself: re-inclusion is the usual outcome. Each
 * settlement is the final loss of one counted payment, so after a closed exception it opens a new one.
 */
const openOnSettledLoss = {
  target: "open.partial_payment",
  guard: and([stateIn({ status: "confirmed" }), { type: "totalIsNot" as const, params: { level: "sufficient" as const } }]),
  actions: openException("partial_payment")
}

/**
 * The invoice lifecycle: the only code that decides a status or an exception state.
 * Two parallel regions: `status` (the spec's seven statuses) and `exception` (merchant review).
 * Its actions are data (`emit`, `stamp`, ...) that the service executes in the same database
 * transaction that saves the new state.
 */
export const invoiceMachine = setup({
  types: {
    events: {} as InvoiceEvent
  },
  guards: {
    onTimeIs: ({ event }, params: { level: OnTimeLevel }) => event.type === "EVIDENCE" && event.onTime === params.level,
    totalIs: ({ event }, params: { level: TotalLevel }) => (event.type === "EVIDENCE" || event.type === "REORG_SETTLED") && event.total === params.level,
    totalIsNot: ({ event }, params: { level: TotalLevel }) => (event.type === "EVIDENCE" || event.type === "REORG_SETTLED") && event.total !== params.level,
    actionIs: ({ event }, params: { action: ExceptionCloseAction }) => event.type === "CLOSE_EXCEPTION" && event.action === params.action,
    newLatePayment: ({ event }) => event.type === "EVIDENCE" && event.newLatePayment
  },
  actions: {
    emit: (_, _params: { event: WebhookEventName }) => {},
    stamp: (_, _params: { field: StampedField }) => {},
    recordOutOfBandNote: () => {},
    recordExceptionClose: () => {},
    openException: (_, _params: { exceptionType: "late_payment" | "partial_payment" }) => {}
  }
}).createMachine({
  id: "invoice",
  type: "parallel",
  states: {
    status: {
      initial: "awaiting_payment",
      states: {
        awaiting_payment: {
          on: {
            VOID: { target: "voided", actions: [stamp("voidedAt"), emit("invoice_voided")] },
            RECORD_PAYMENT: recordPayment,
            EVIDENCE: [toPartiallyPaid, toPaymentDetected, toConfirmed],
            DEADLINE_PASSED: { target: "expired", actions: [emit("invoice_expired")] }
          }
        },
        partially_paid: {
          on: {
            RECORD_PAYMENT: recordPayment,
            EVIDENCE: [toAwaiting, toPaymentDetected, toConfirmed],
            DEADLINE_PASSED: { target: "expired", actions: [emit("invoice_expired")] }
          }
        },
        payment_detected: {
          on: {
            EVIDENCE: [toAwaiting, toPartiallyPaid, toConfirmed]
          }
        },
        confirmed: {},
        paid_out_of_band: {},
        expired: {
          on: {
            RECORD_PAYMENT: recordPayment,
            CLOSE_EXCEPTION: closeOnLateStatus
          }
        },
        voided: {
          on: {
            CLOSE_EXCEPTION: closeOnLateStatus
          }
        }
      }
    },
    exception: {
      initial: "none",
      states: {
        none: {
          on: {
            EVIDENCE: openOnLateEvidence(false),
            REORG_SETTLED: openOnSettledLoss,
            DEADLINE_PASSED: {
              target: "open.partial_payment",
              guard: stateIn({ status: "partially_paid" }),
              actions: openException("partial_payment")
            }
          }
        },
        open: {
          initial: "partial_payment",
          states: {
            partial_payment: {
              on: {
                EVIDENCE: {
                  target: "late_payment",
                  guard: and([inLateStatus, { type: "totalIs", params: { level: "sufficient" } }]),
                  actions: openException("late_payment")
                }
              }
            },
            late_payment: {
              on: {
                EVIDENCE: {
                  target: "partial_payment",
                  guard: { type: "totalIsNot", params: { level: "sufficient" } },
                  actions: openException("partial_payment")
                }
              }
            }
          },
          on: {
            RECORD_PAYMENT: { target: "closed", guard: stateIn({ status: "expired" }), actions: closeException },
            CLOSE_EXCEPTION: [
              {
                target: "closed",
                guard: and([{ type: "actionIs", params: { action: "accept_late_payment" } }, stateIn({ exception: { open: "late_payment" } })]),
                actions: closeException
              },
              // Reorg honesty: confirmed is final, so the merchant's word that the money the chain no longer
              // shows was paid outside the service is recorded without moving the status.
              {
                target: "closed",
                guard: and([{ type: "actionIs", params: { action: "mark_paid_out_of_band" } }, stateIn({ status: "confirmed" })]),
                actions: [stamp("paidOutOfBandAt"), { type: "recordOutOfBandNote" as const }, ...closeException]
              },
              { target: "closed", guard: { type: "actionIs", params: { action: "mark_paid_out_of_band" } }, actions: closeException },
              { target: "closed", guard: { type: "actionIs", params: { action: "close_unpaid" } }, actions: closeException }
            ]
          }
        },
        // A new exception replaces the closed one's fields; the earlier close stays in the outbox.
        closed: {
          on: {
            EVIDENCE: openOnLateEvidence(true),
            // A loss after the merchant closed the exception of an earlier one is a new loss to review.
            REORG_SETTLED: openOnSettledLoss
          }
        }
      }
    }
  }
})

export type InvoiceMachine = typeof invoiceMachine
