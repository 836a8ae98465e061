import { Effect } from "effect"
import { type Command, MINUTE } from "./ReferenceModel.ts"
import { type Actual, apply, observe, type Sequence, type SpecServices, start, takeLastRefusal } from "./SpecDriver.ts"
import { type EventName, rowById, type Status, type TransitionRow } from "./transitions.ts"

/**
 * One case per row of transitions.ts (some rows have several): commands that bring a new invoice
 * to the row's source state (`given`), the row's trigger (`when`), and what the row says follows.
 * Unless a case says otherwise, the expected status, events and stamped fields are the row's own.
 */
export interface TableCase {
  readonly row: string
  readonly title: string
  /** The due-date merchant (7 days, 3 days of grace) instead of the immediate one (60 minutes). */
  readonly dueDate?: boolean
  readonly given: ReadonlyArray<Command>
  /** Absent: the row is the creation itself. */
  readonly when?: Command
  readonly then?: {
    readonly answer?: "ok" | "refused"
    /** For a refusal: the reason its row names (the error's detail, or the operation and status the lifecycle refused). */
    readonly reason?: RegExp
    readonly status?: Status
    readonly events?: ReadonlyArray<EventName>
    readonly check?: (invoice: Actual, sequence: Sequence) => void
  }
}

const pay = (usd: number, more: Partial<Extract<Command, { kind: "pay" }>> = {}): Command => ({
  kind: "pay",
  option: 0,
  usd,
  confirmations: 0,
  chainTime: { from: "now", offsetMs: 0 },
  ...more
})
const confirm = (payment: number, confirmations = 12): Command => ({ kind: "observe", payment, confirmations })
const invalidate = (payment: number, reorgPoint = false): Command => ({ kind: "invalidate", payment, reorgPoint })
const pastDeadline: Command = { kind: "advance", ms: 61 * MINUTE }
const sweep: Command = { kind: "sweep" }
const voidIt: Command = { kind: "void" }
const close = (action: Extract<Command, { kind: "close" }>["action"]): Command => ({ kind: "close", action, note: "reviewed by the merchant" })
const record: Command = { kind: "record", note: "paid by bank transfer" }

/** Ways to reach each status from a new invoice. */
const REACH: Record<Status, ReadonlyArray<Command>> = {
  awaiting_payment: [],
  partially_paid: [pay(10)],
  payment_detected: [pay(100)],
  confirmed: [pay(100, { confirmations: 12 })],
  paid_out_of_band: [record],
  expired: [pastDeadline, sweep],
  voided: [voidIt]
}

const expired = REACH.expired
const expiredWithPartial = [pay(10), pastDeadline, sweep]
const expiredWithLate = [pastDeadline, sweep, pay(100)]

export const TABLE_CASES: ReadonlyArray<TableCase> = [
  {
    row: "S1-create",
    title: "a new invoice awaits payment: no_payment, amounts 0, confirmations 0, no timestamps",
    given: [],
    then: {
      status: "awaiting_payment",
      events: ["invoice_created"],
      check: (invoice) => {
        if (invoice.paymentCoverage !== "no_payment" || invoice.receivedMicros !== 0n || invoice.confirmedMicros !== 0n || invoice.confirmations !== 0) {
          throw new Error("a new invoice has coverage no_payment, 0 received and confirmed, 0 confirmations")
        }
        if (invoice.remainingMicros !== 100_000_000n || invoice.paymentDetectedAt !== null || invoice.confirmedAt !== null) {
          throw new Error("remainingAmountUsd equals amountUsd, no detection or confirmation timestamps")
        }
      }
    }
  },
  { row: "S2-void", title: "awaiting_payment → voided", given: [], when: voidIt },
  ...(["partially_paid", "payment_detected", "confirmed", "paid_out_of_band", "expired", "voided"] as const).map((status): TableCase => ({
    row: "S3-void-refused",
    title: `void from ${status}: 409, unchanged`,
    given: REACH[status],
    when: voidIt,
    then: { answer: "refused", reason: new RegExp(`^void refused from ${status}$`) }
  })),
  ...(["awaiting_payment", "partially_paid", "expired"] as const).map((status): TableCase => ({
    row: "S4-record-payment",
    title: `record-payment from ${status}`,
    given: REACH[status],
    when: record,
    then: {
      check: (invoice) => {
        if (invoice.paidOutOfBandNote !== "paid by bank transfer") throw new Error(`paidOutOfBandNote is the note, got ${invoice.paidOutOfBandNote}`)
      }
    }
  })),
  { row: "S5-partially-paid", title: "awaiting_payment: 10 of 100 USD on time", given: [], when: pay(10) },
  { row: "S5-partially-paid", title: "payment_detected: a reorganisation leaves 10 of 100 USD", given: [pay(10), pay(100)], when: invalidate(1) },
  { row: "S6-payment-detected", title: "awaiting_payment: 100 USD below the confirmation threshold", given: [], when: pay(100) },
  { row: "S6-payment-detected", title: "partially_paid: the remaining 90 USD", given: [pay(10)], when: pay(90, { option: 1 }) },
  {
    row: "S7-confirmed",
    title: "awaiting_payment: 100 USD with its confirmations at once (paymentDetectedAt stamped too)",
    given: [],
    when: pay(100, { confirmations: 12 }),
    then: {
      check: (invoice) => {
        if (invoice.paymentDetectedAt === null) throw new Error("paymentDetectedAt is set when sufficient payment is first detected")
      }
    }
  },
  { row: "S7-confirmed", title: "payment_detected: the payment reaches 12 confirmations", given: [pay(100)], when: confirm(0) },
  { row: "S7-confirmed", title: "partially_paid: the confirmed remainder", given: [pay(10, { confirmations: 12 })], when: pay(90, { confirmations: 12 }) },
  { row: "S8-expired", title: "awaiting_payment: the deadline passes", given: [pastDeadline], when: sweep },
  {
    row: "S9-late-payment",
    title: "expired: a full payment first observed after payableUntilAt",
    given: expired,
    when: pay(100, { confirmations: 12 }),
    then: { status: "expired", check: (invoice) => expectException(invoice, "late_payment", "open") }
  },
  {
    row: "S9-late-payment",
    title: "voided: a late full payment never confirms automatically, whatever its confirmations",
    given: [voidIt, pay(100)],
    when: confirm(0, 30),
    then: { status: "voided", events: [], check: (invoice) => expectException(invoice, "late_payment", "open") }
  },
  {
    row: "S10-accept-late-payment",
    title: "expired with an open late_payment exception, the late payment confirmed",
    given: [...expiredWithLate, confirm(0)],
    when: close("accept_late_payment"),
    then: { check: (invoice) => expectClosed(invoice, "accept_late_payment") }
  },
  {
    row: "S10-accept-late-payment",
    title: "voided with an open late_payment exception",
    given: [voidIt, pay(100, { confirmations: 12 })],
    when: close("accept_late_payment"),
    then: { check: (invoice) => expectClosed(invoice, "accept_late_payment") }
  },
  {
    row: "R1-exception-types",
    title: "the exceptions an invoice goes through are partial_payment and late_payment only",
    given: [...expiredWithPartial, pay(95)],
    when: invalidate(1),
    then: { events: ["invoice_exception_opened"], check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "R2-overpayment",
    title: "120 of 100 USD confirmed on time: confirmed, overpayment of 20, no exception",
    given: [],
    when: pay(120, { confirmations: 12 }),
    then: {
      status: "confirmed",
      events: ["invoice_confirmed"],
      check: (invoice) => {
        if (invoice.paymentCoverage !== "overpayment" || invoice.overpaymentMicros !== 20_000_000n) throw new Error("coverage overpayment, overpaymentAmountUsd 20")
        expectException(invoice, null, null)
      }
    }
  },
  {
    row: "R2-overpayment",
    title: "payment_detected: 20 USD more stays payment_detected, no exception",
    given: [pay(100)],
    when: pay(20, { option: 1 }),
    then: { status: "payment_detected", check: (invoice) => expectException(invoice, null, null) }
  },
  {
    row: "R3-close-fields",
    title: "voided with a partial_payment exception: the close records its action, note and time",
    given: [voidIt, pay(10)],
    when: close("close_unpaid"),
    then: { status: "voided", check: (invoice) => expectClosed(invoice, "close_unpaid") }
  },
  {
    row: "T1-on-time-at-deadline",
    title: "a payment whose chain time is exactly payableUntilAt, processed after it, is on time",
    given: [pastDeadline],
    when: pay(100, { chainTime: { from: "deadline", offsetMs: 0 } }),
    then: { status: "payment_detected", events: ["invoice_payment_detected"], check: (invoice) => expectException(invoice, null, null) }
  },
  {
    row: "T1-on-time-at-deadline",
    title: "one millisecond after payableUntilAt is late",
    given: [pastDeadline],
    when: pay(100, { chainTime: { from: "deadline", offsetMs: 1 } }),
    then: { status: "expired", events: ["invoice_expired", "invoice_exception_opened"], check: (invoice) => expectException(invoice, "late_payment", "open") }
  },
  {
    row: "T1-on-time-at-deadline",
    title: "the sweeper does not expire an invoice exactly at payableUntilAt",
    given: [{ kind: "advance", ms: 60 * MINUTE }],
    when: sweep,
    then: { status: "awaiting_payment", events: [] }
  },
  {
    row: "T2-due-date-grace",
    dueDate: true,
    title: "due-date invoice: a payment after dueAt but within the grace period is on time",
    given: [{ kind: "advance", ms: 8 * 24 * 60 * MINUTE }, sweep],
    when: pay(100),
    then: { status: "payment_detected", events: ["invoice_payment_detected"] }
  },
  {
    row: "T2-due-date-grace",
    dueDate: true,
    title: "due-date invoice: expires only after the grace period (payableUntilAt)",
    given: [{ kind: "advance", ms: 10 * 24 * 60 * MINUTE }, sweep, { kind: "advance", ms: 1 }],
    when: sweep,
    then: { status: "expired", events: ["invoice_expired"] }
  },
  {
    row: "F1-last-transaction-hash",
    title: "lastTransactionHash is the latest valid payment's, back to the earlier one after a reorganisation",
    given: [pay(10), { kind: "advance", ms: MINUTE }, pay(20)],
    when: invalidate(1),
    then: {
      status: "partially_paid",
      events: [],
      check: (invoice, sequence) => {
        if (invoice.lastTransactionHash !== sequence.model.payments[0].transactionHash) throw new Error("lastTransactionHash is the first payment's again")
      }
    }
  },
  {
    row: "F1-last-transaction-hash",
    title: "lastTransactionHash is null once no payment counts",
    given: [pay(10)],
    when: invalidate(0),
    then: {
      status: "awaiting_payment",
      events: [],
      check: (invoice) => {
        if (invoice.lastTransactionHash !== null) throw new Error(`lastTransactionHash of an invoice with no counted payment: expected null, got ${invoice.lastTransactionHash}`)
      }
    }
  },
  {
    row: "F3-last-payment",
    title: "a later payment invalidated: lastPaymentOptionId and lastPaymentObservedAt stay on it (the latest observed event)",
    given: [pay(10), { kind: "advance", ms: MINUTE }, pay(20, { option: 1 })],
    when: invalidate(1),
    then: {
      status: "partially_paid",
      events: [],
      check: (invoice, sequence) => {
        const later = sequence.model.payments[1]
        if (invoice.lastPaymentOption !== 1 || invoice.lastPaymentObservedAt !== later.chainTime) {
          throw new Error(`the invalidated later payment's option 1 and time: got option ${invoice.lastPaymentOption} at ${invoice.lastPaymentObservedAt}`)
        }
        if (invoice.lastTransactionHash !== sequence.model.payments[0].transactionHash) throw new Error("lastTransactionHash is the counted payment's")
      }
    }
  },
  {
    row: "F3-last-payment",
    title: "every payment invalidated: lastPaymentOptionId and lastPaymentObservedAt keep the latest observed one, lastTransactionHash is null",
    given: [pay(10), { kind: "advance", ms: MINUTE }, pay(20, { option: 1 }), invalidate(1)],
    when: invalidate(0),
    then: {
      status: "awaiting_payment",
      events: [],
      check: (invoice, sequence) => {
        if (invoice.lastPaymentOption !== 1 || invoice.lastPaymentObservedAt !== sequence.model.payments[1].chainTime) {
          throw new Error(`the latest observed payment's option 1 and time: got option ${invoice.lastPaymentOption} at ${invoice.lastPaymentObservedAt}`)
        }
        if (invoice.lastTransactionHash !== null) throw new Error("lastTransactionHash is null once no payment counts")
      }
    }
  },
  {
    row: "F2-coverage-and-amounts",
    title: "received across both options, confirmed only what reached the threshold",
    given: [pay(10, { confirmations: 12 })],
    when: pay(25, { option: 1 }),
    then: {
      status: "partially_paid",
      events: [],
      check: (invoice) => {
        if (invoice.receivedMicros !== 35_000_000n || invoice.confirmedMicros !== 10_000_000n || invoice.remainingMicros !== 65_000_000n) {
          throw new Error("received 35, confirmed 10, remaining 65")
        }
        if (invoice.paymentCoverage !== "partial_payment") throw new Error("coverage partial_payment")
      }
    }
  },
  { row: "D1-back-to-awaiting", title: "partially_paid: its only payment is reorganised away", given: [pay(10)], when: invalidate(0) },
  { row: "D1-back-to-awaiting", title: "payment_detected: its only payment is reorganised away", given: [pay(100)], when: invalidate(0) },
  {
    row: "D2-confirmed-is-final",
    title: "confirmed: a watcher's reorganisation leaves it confirmed until the reorganisation settles",
    given: [pay(100, { confirmations: 12 })],
    when: invalidate(0, true),
    then: { status: "confirmed", check: (invoice) => expectException(invoice, null, null) }
  },
  { row: "D3-detected-does-not-expire", title: "payment_detected past its deadline", given: [pay(100), pastDeadline], when: sweep, then: { status: "payment_detected" } },
  {
    row: "D4-expired-with-partial",
    title: "partially_paid: the deadline passes",
    given: [pay(10), pastDeadline],
    when: sweep,
    then: { check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "D5-void-ends-window",
    title: "voided: a payment mined before payableUntilAt but after the void is late",
    given: [voidIt],
    when: pay(100),
    then: { status: "voided", check: (invoice) => expectException(invoice, "late_payment", "open") }
  },
  {
    row: "D6-late-partial",
    title: "expired: a late 10 of 100 USD",
    given: expired,
    when: pay(10),
    then: { status: "expired", check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "D6-late-partial",
    title: "voided: a late 10 of 100 USD",
    given: [voidIt],
    when: pay(10),
    then: { status: "voided", check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "D7-reopen-after-closed",
    title: "expired: a late full payment after a closed partial_payment exception opens a new late_payment exception",
    given: [...expiredWithPartial, close("close_unpaid")],
    when: pay(100),
    then: {
      status: "expired",
      check: (invoice) => {
        expectException(invoice, "late_payment", "open")
        if (invoice.exceptionAction !== null || invoice.exceptionNote !== null || invoice.exceptionClosedAt !== null) {
          throw new Error("the new exception replaces the closed one's fields")
        }
      }
    }
  },
  {
    row: "D7-reopen-after-closed",
    title: "voided: a late payment after a closed exception opens a new one",
    given: [voidIt, pay(10), close("close_unpaid")],
    when: pay(10, { option: 1 }),
    then: { status: "voided", events: ["invoice_exception_opened"], check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "D8-accept-late-only-for-late",
    title: "accept_late_payment on a partial_payment exception whose payment is confirmed (only the late-only rule refuses)",
    given: [pay(10, { confirmations: 12 }), pastDeadline, sweep],
    when: close("accept_late_payment"),
    then: { answer: "refused", reason: /^close-exception refused from expired$/, check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "D9-close-mark-paid-out-of-band",
    title: "expired with a late_payment exception: mark_paid_out_of_band",
    given: expiredWithLate,
    when: close("mark_paid_out_of_band"),
    then: {
      check: (invoice) => {
        expectClosed(invoice, "mark_paid_out_of_band")
        if (invoice.paidOutOfBandNote !== "reviewed by the merchant") throw new Error("paidOutOfBandNote is the exception note")
      }
    }
  },
  {
    row: "D10-close-unpaid",
    title: "expired with a partial_payment exception: close_unpaid",
    given: expiredWithPartial,
    when: close("close_unpaid"),
    then: { status: "expired", check: (invoice) => expectClosed(invoice, "close_unpaid") }
  },
  {
    row: "D10-close-unpaid",
    title: "confirmed with a reorganisation exception: close_unpaid",
    given: [pay(100, { confirmations: 12 }), invalidate(0)],
    when: close("close_unpaid"),
    then: { status: "confirmed", check: (invoice) => expectClosed(invoice, "close_unpaid") }
  },
  {
    row: "D11-record-payment-closes-exception",
    title: "expired with an open partial_payment exception: record-payment",
    given: expiredWithPartial,
    when: record,
    then: { check: (invoice) => expectClosed(invoice, "mark_paid_out_of_band") }
  },
  {
    row: "D12-accept-needs-confirmations",
    title: "accept_late_payment while the late payment has 0 of 12 confirmations",
    given: expiredWithLate,
    when: close("accept_late_payment"),
    then: {
      answer: "refused",
      reason: /^The late payment has 0 of 12 confirmations; accept it once it is confirmed$/,
      check: (invoice) => expectException(invoice, "late_payment", "open")
    }
  },
  {
    row: "D13-reorg-settles-short",
    title: "confirmed: the reorganisation settles with the payment not mined again",
    given: [pay(100, { confirmations: 12 }), invalidate(0, true)],
    when: { kind: "settleReorg", payment: 0 },
    then: { status: "confirmed", check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "D13-reorg-settles-short",
    title: "confirmed: the same transaction mined again before the reorganisation settles opens nothing",
    given: [pay(100, { confirmations: 12 }), invalidate(0, true), confirm(0, 12)],
    when: { kind: "settleReorg", payment: 0 },
    then: { status: "confirmed", events: [], check: (invoice) => expectException(invoice, null, null) }
  },
  ...(["close_unpaid", "mark_paid_out_of_band"] as const).map((action): TableCase => ({
    row: "D23-loss-after-closed-reopens",
    title: `confirmed with two payments: the second is invalidated after the first's exception was closed with ${action}`,
    given: [pay(60, { confirmations: 12 }), pay(60, { confirmations: 12 }), invalidate(0), close(action)],
    when: invalidate(1),
    then: {
      status: "confirmed",
      check: (invoice) => {
        expectException(invoice, "partial_payment", "open")
        if (invoice.exceptionAction !== null || invoice.exceptionNote !== null || invoice.exceptionClosedAt !== null) {
          throw new Error("the new exception replaces the closed one's fields")
        }
      }
    }
  })),
  {
    row: "D23-loss-after-closed-reopens",
    title: "confirmed: after a closed exception, a watcher's reorganisation of the second payment opens a new one once it settles",
    given: [pay(60, { confirmations: 12 }), pay(60, { confirmations: 12 }), invalidate(0), close("close_unpaid"), invalidate(1, true)],
    when: { kind: "settleReorg", payment: 1 },
    then: { status: "confirmed", check: (invoice) => expectException(invoice, "partial_payment", "open") }
  },
  {
    row: "D23-loss-after-closed-reopens",
    title: "confirmed: after a closed exception, the second payment mined again before its reorganisation settles opens nothing",
    given: [pay(60, { confirmations: 12 }), pay(60, { confirmations: 12 }), invalidate(0), close("close_unpaid"), invalidate(1, true), confirm(1, 12)],
    when: { kind: "settleReorg", payment: 1 },
    then: { status: "confirmed", events: [], check: (invoice) => expectException(invoice, "partial_payment", "closed") }
  },
  {
    row: "D14-chain-time-decides",
    title: "seen in the mempool before the deadline, mined after it: on time, confirmed",
    given: [pay(100, { mempool: true }), pastDeadline, sweep],
    when: confirm(0, 12),
    then: { status: "confirmed", events: ["invoice_confirmed"], check: (invoice) => expectException(invoice, null, null) }
  },
  {
    row: "D14-chain-time-decides",
    title: "processed 90 s after the deadline with a chain time before it: on time",
    given: [{ kind: "advance", ms: 60 * MINUTE + 90_000 }],
    when: pay(100, { chainTime: { from: "deadline", offsetMs: -60_000 } }),
    then: { status: "payment_detected", events: ["invoice_payment_detected"] }
  },
  {
    row: "D15-sweeper-waits-for-watcher",
    title: "the ethereum watcher has processed chain data only up to a minute before the deadline",
    given: [{ kind: "watcher", network: "ethereum", chainTime: { from: "deadline", offsetMs: -60_000 } }, pastDeadline],
    when: sweep,
    then: { status: "awaiting_payment" }
  },
  {
    row: "D15-sweeper-waits-for-watcher",
    title: "the lagging watcher reaches the deadline: the sweeper expires the invoice",
    given: [{ kind: "watcher", network: "base", chainTime: null }, pastDeadline, sweep, { kind: "watcher", network: "base", chainTime: { from: "deadline", offsetMs: 0 } }],
    when: sweep,
    then: { status: "expired", events: ["invoice_expired"] }
  },
  ...(["payment_detected", "confirmed", "paid_out_of_band", "voided"] as const).map((status): TableCase => ({
    row: "D16-record-payment-refused",
    title: `record-payment from ${status}: 409`,
    given: REACH[status],
    when: record,
    then: { answer: "refused", reason: new RegExp(`^record-payment refused from ${status}$`) }
  })),
  {
    row: "D17-confirmations",
    title: "a later unconfirmed overpayment does not lower a confirmed invoice's confirmations",
    given: [pay(100, { confirmations: 12 })],
    when: pay(20, { option: 1 }),
    then: {
      status: "confirmed",
      check: (invoice) => {
        if (invoice.confirmations !== 12) throw new Error(`confirmations: expected 12, got ${invoice.confirmations}`)
      }
    }
  },
  {
    row: "D17-confirmations",
    title: "payment_detected: the least confirmations among the payments that make the amount",
    given: [pay(50, { confirmations: 3 })],
    when: pay(50, { option: 1, confirmations: 5 }),
    then: {
      status: "payment_detected",
      events: ["invoice_payment_detected"],
      check: (invoice) => {
        if (invoice.confirmations !== 3) throw new Error(`confirmations: expected 3, got ${invoice.confirmations}`)
      }
    }
  },
  {
    row: "D18-outbox-once",
    title: "the same evidence reported by two watchers at once writes no second event",
    given: [pay(100), confirm(0, 3)],
    when: { kind: "duplicate", payment: 0 },
    then: { status: "payment_detected", events: [] }
  },
  {
    row: "D19-late-type-follows-total",
    title: "expired with a partial_payment exception: the late remainder makes it late_payment",
    given: expiredWithPartial,
    when: pay(90),
    then: { check: (invoice) => expectException(invoice, "late_payment", "open") }
  },
  { row: "D20-close-needs-open-exception", title: "close with no exception: 409", given: [pay(10)], when: close("close_unpaid"),
    then: { answer: "refused", reason: /^close-exception refused from partially_paid$/ } },
  {
    row: "D21-reorg-close-mark-paid-out-of-band",
    title: "a confirmed invoice's reorganisation exception closed with mark_paid_out_of_band stays confirmed and records the merchant's word",
    given: [pay(100, { confirmations: 12 }), invalidate(0)],
    when: close("mark_paid_out_of_band"),
    then: {
      status: "confirmed",
      events: ["invoice_exception_closed"],
      check: (invoice) => {
        expectClosed(invoice, "mark_paid_out_of_band")
        if (invoice.paidOutOfBandAt === null || invoice.paidOutOfBandAt !== invoice.exceptionClosedAt) throw new Error("paidOutOfBandAt is the close's time")
        if (invoice.paidOutOfBandNote !== "reviewed by the merchant") throw new Error(`paidOutOfBandNote is the exception note, got ${invoice.paidOutOfBandNote}`)
      }
    }
  },
  {
    row: "D22-only-new-late-payment-reopens",
    title: "expired: the reviewed late payment confirming after close_unpaid opens nothing",
    given: [...expiredWithLate, close("close_unpaid")],
    when: confirm(0, 12),
    then: { status: "expired", events: [], check: (invoice) => expectClosed(invoice, "close_unpaid") }
  },
  {
    row: "I2-reinclusion-after-mempool",
    title: "payment_detected from the mempool, dropped, then seen in the mempool again: detected again",
    given: [pay(100, { mempool: true }), invalidate(0)],
    when: { kind: "observe", payment: 0, confirmations: 0, mempool: true },
    then: { status: "payment_detected", events: ["invoice_payment_detected"], check: (invoice) => expectAmounts(invoice, 100_000_000n, 0n) }
  },
  {
    row: "I3-confirms-afresh",
    title: "confirmed: its payment reorganised away and re-mined with 2 confirmations counts as unconfirmed until it has 12 again",
    given: [pay(100, { confirmations: 12 }), invalidate(0, true)],
    when: confirm(0, 2),
    then: {
      status: "confirmed",
      events: [],
      check: (invoice) => {
        expectAmounts(invoice, 100_000_000n, 0n)
        if (invoice.confirmations !== 2) throw new Error(`confirmations: expected 2, got ${invoice.confirmations}`)
      }
    }
  },
  {
    row: "I1-evidence-once",
    title: "the same evidence replayed, invalidated, re-included, replayed, duplicated counts once",
    given: [pay(100), confirm(0, 0), invalidate(0), confirm(0, 0), confirm(0, 0)],
    when: { kind: "duplicate", payment: 0 },
    then: {
      status: "payment_detected",
      events: [],
      check: (invoice) => {
        if (invoice.paymentCount !== 1 || invoice.receivedMicros !== 100_000_000n) throw new Error("one payment of 100 USD")
      }
    }
  }
]

function expectException(invoice: Actual, type: "late_payment" | "partial_payment" | null, status: "open" | "closed" | null) {
  if (invoice.exceptionType !== type || invoice.exceptionStatus !== status) {
    throw new Error(`exception: expected ${type}/${status}, got ${invoice.exceptionType}/${invoice.exceptionStatus}`)
  }
}

function expectAmounts(invoice: Actual, received: bigint, confirmed: bigint) {
  if (invoice.receivedMicros !== received || invoice.confirmedMicros !== confirmed) {
    throw new Error(`received ${received}, confirmed ${confirmed}; got ${invoice.receivedMicros}, ${invoice.confirmedMicros}`)
  }
}

function expectClosed(invoice: Actual, action: string) {
  if (invoice.exceptionStatus !== "closed" || invoice.exceptionAction !== action || invoice.exceptionNote === null || invoice.exceptionClosedAt === null) {
    throw new Error(`exception closed with ${action}, note and closedAt recorded; got ${invoice.exceptionStatus}/${invoice.exceptionAction}`)
  }
}

const STAMPS = ["paymentDetectedAt", "confirmedAt", "paidOutOfBandAt", "paidOutOfBandNote", "exceptionAction", "exceptionNote", "exceptionClosedAt"] as const

/** Runs a case and checks it against its row; every command on the way is checked against the reference model too. */
export const runCase = (tableCase: TableCase) =>
  Effect.gen(function*() {
    const row: TransitionRow = rowById(tableCase.row)
    const sequence = yield* start
    for (const command of tableCase.given) yield* apply(sequence, command, { ownRow: tableCase.row })
    const before = yield* observe(sequence.invoiceId)
    takeLastRefusal()
    const answer = tableCase.when === undefined ? "ok" : yield* apply(sequence, tableCase.when, { ownRow: tableCase.row })
    const refusal = takeLastRefusal()
    const after = yield* observe(sequence.invoiceId)
    const then = tableCase.then ?? {}
    const failures: Array<string> = []
    const wantAnswer = then.answer ?? (row.http === 409 ? "refused" : "ok")
    if (answer !== wantAnswer) failures.push(`answer: expected ${wantAnswer}, got ${answer}`)
    // A refusal must be the row's own: a case that another rule refuses would pass for the wrong reason.
    if (wantAnswer === "refused" && then.reason === undefined) failures.push("a refusing case names the reason its row gives (then.reason)")
    if (then.reason !== undefined && (refusal === undefined || !then.reason.test(refusal))) failures.push(`reason: expected ${then.reason}, got ${refusal}`)
    const wantStatus = then.status ?? (row.to === "unchanged" ? before.status : row.to)
    if (after.status !== wantStatus) failures.push(`status: expected ${wantStatus}, got ${after.status}`)
    const events = tableCase.when === undefined ? after.events : after.events.slice(before.events.length)
    const wantEvents = then.events ?? (wantAnswer === "refused" ? [] : row.events)
    if (JSON.stringify(events) !== JSON.stringify(wantEvents)) failures.push(`events: expected ${JSON.stringify(wantEvents)}, got ${JSON.stringify(events)}`)
    if (wantAnswer === "ok" && then.events === undefined) {
      for (const field of STAMPS) if (row.sets.includes(field) && after[field] === null) failures.push(`${field} is set by the row`)
    }
    if (wantAnswer === "refused" && JSON.stringify({ ...after, events: [] }, bigints) !== JSON.stringify({ ...before, events: [] }, bigints)) {
      failures.push("a refused request changes nothing")
    }
    try {
      then.check?.(after, sequence)
    } catch (error) {
      failures.push((error as Error).message)
    }
    if (failures.length > 0) {
      return yield* Effect.die(new Error([`${row.id}: ${row.words}`, ...sequence.log.map((line) => `  · ${line}`), ...failures.map((failure) => `  ✗ ${failure}`)].join("\n")))
    }
  }) as Effect.Effect<void, never, SpecServices>

const bigints = (_: string, value: unknown) => (typeof value === "bigint" ? value.toString() : value)
