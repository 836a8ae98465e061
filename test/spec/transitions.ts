/**
 * The spec's "States and transitions" table and the rules after it, row by row in the spec's
 * words (shared/spec/checkout-invoicing-spec.md), plus the decisions of shared/DESIGN.md
 * ("Lifecycle decisions") where the spec says "not shown", each marked `source: "design"`.
 *
 * This file is the oracle of test/spec: it imports nothing from src/. The reference model
 * (ReferenceModel.ts) takes its targets, events and stamped fields from these rows, and
 * transitions.test.ts runs at least one case per row against the service.
 */

export const STATUSES = [
  "awaiting_payment",
  "partially_paid",
  "payment_detected",
  "confirmed",
  "paid_out_of_band",
  "expired",
  "voided"
] as const
export type Status = typeof STATUSES[number]

export const EVENT_NAMES = [
  "invoice_created",
  "invoice_partially_paid",
  "invoice_payment_detected",
  "invoice_confirmed",
  "invoice_expired",
  "invoice_voided",
  "invoice_payment_recorded",
  "invoice_exception_opened",
  "invoice_exception_closed"
] as const
export type EventName = typeof EVENT_NAMES[number]

export type ExceptionType = "late_payment" | "partial_payment"
export type CloseAction = "accept_late_payment" | "mark_paid_out_of_band" | "close_unpaid"
export type StampedField = "paymentDetectedAt" | "confirmedAt" | "paidOutOfBandAt" | "paidOutOfBandNote" | "exceptionAction" | "exceptionNote" | "exceptionClosedAt"

export interface TransitionRow {
  /** Stable id: `S` rows are the spec's table, `R`/`T`/`F` its rules and fields, `D` DESIGN.md's decisions. */
  readonly id: string
  readonly source: "spec" | "design"
  /** Where the spec says "not shown" and DESIGN.md decides, or where a rule is read into a case the text does not spell out. */
  readonly note?: string
  readonly from: ReadonlyArray<Status | "(none)"> | "any other status"
  readonly trigger: string
  readonly condition: string
  readonly to: Status | "unchanged"
  /** Webhook events, in the order the service writes them (the spec does not order deliveries; DESIGN: status event, then exception event). */
  readonly events: ReadonlyArray<EventName>
  readonly sets: ReadonlyArray<StampedField>
  readonly exception?: { readonly opens?: ExceptionType; readonly closes?: true; readonly becomes?: ExceptionType }
  /** What the merchant's request answers when the row refuses it. */
  readonly http?: 409
  readonly words: string
}

const DETECTION_SOURCES = ["awaiting_payment", "partially_paid", "payment_detected"] as const

export const TRANSITIONS: ReadonlyArray<TransitionRow> = [
  // The spec's table.
  {
    id: "S1-create",
    source: "spec",
    from: ["(none)"],
    trigger: "POST create invoice",
    condition: "valid request",
    to: "awaiting_payment",
    events: ["invoice_created"],
    sets: [],
    words: "(none) | POST create invoice | valid request | awaiting_payment | Event `invoice_created`."
  },
  {
    id: "S2-void",
    source: "spec",
    from: ["awaiting_payment"],
    trigger: "POST void",
    condition: "none",
    to: "voided",
    events: ["invoice_voided"],
    sets: [],
    words: "awaiting_payment | POST void | none | voided | Event `invoice_voided`."
  },
  {
    id: "S3-void-refused",
    source: "spec",
    from: "any other status",
    trigger: "POST void",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    http: 409,
    words: "any other status | POST void | none | unchanged | HTTP 409."
  },
  {
    id: "S4-record-payment",
    source: "spec",
    from: ["awaiting_payment", "partially_paid", "expired"],
    trigger: "POST record-payment",
    condition: "valid note",
    to: "paid_out_of_band",
    events: ["invoice_payment_recorded"],
    sets: ["paidOutOfBandAt", "paidOutOfBandNote"],
    words:
      "awaiting_payment, partially_paid, expired | POST record-payment | valid note | paid_out_of_band | Sets paidOutOfBandAt and paidOutOfBandNote. Event `invoice_payment_recorded`."
  },
  {
    id: "S5-partially-paid",
    source: "spec",
    note: "source states not shown; DESIGN: awaiting_payment, and payment_detected when a reorganisation leaves less than the amount",
    from: ["awaiting_payment", "payment_detected"],
    trigger: "payment detected, total below required amount",
    condition: "on time",
    to: "partially_paid",
    events: ["invoice_partially_paid"],
    sets: [],
    words: "(source per note below) | payment detected, total below required amount | on time | partially_paid | Event `invoice_partially_paid`."
  },
  {
    id: "S6-payment-detected",
    source: "spec",
    note: "source states not shown; DESIGN: awaiting_payment or partially_paid (straight when one observation suffices)",
    from: ["awaiting_payment", "partially_paid"],
    trigger: "sufficient payment detected, below confirmation threshold",
    condition: "on time",
    to: "payment_detected",
    events: ["invoice_payment_detected"],
    sets: ["paymentDetectedAt"],
    words:
      "(source per note below) | sufficient payment detected, below confirmation threshold | on time | payment_detected | Sets paymentDetectedAt. Event `invoice_payment_detected`."
  },
  {
    id: "S7-confirmed",
    source: "spec",
    note:
      "source states not shown; DESIGN: awaiting_payment, partially_paid or payment_detected; reaching it in one observation also stamps paymentDetectedAt (first detected then)",
    from: [...DETECTION_SOURCES],
    trigger: "sufficient detected funds reach the confirmation threshold",
    condition: "on time",
    to: "confirmed",
    events: ["invoice_confirmed"],
    sets: ["confirmedAt"],
    words: "(source per note below) | sufficient detected funds reach the confirmation threshold | on time | confirmed | Sets confirmedAt. Event `invoice_confirmed`."
  },
  {
    id: "S8-expired",
    source: "spec",
    note: "source states not shown; DESIGN: awaiting_payment and partially_paid (payment_detected waits for confirmations)",
    from: ["awaiting_payment", "partially_paid"],
    trigger: "final payable deadline elapses before sufficient payment",
    condition: "none",
    to: "expired",
    events: ["invoice_expired"],
    sets: [],
    words: "(source per note below) | final payable deadline elapses before sufficient payment | none | expired | Event `invoice_expired`."
  },
  {
    id: "S9-late-payment",
    source: "spec",
    from: ["expired", "voided"],
    trigger: "late full payment observed",
    condition: "payment first observed after payableUntilAt",
    to: "unchanged",
    events: ["invoice_exception_opened"],
    sets: [],
    exception: { opens: "late_payment" },
    words:
      "expired or voided | late full payment observed | payment first observed after payableUntilAt | stays expired or voided | Opens exception of type `late_payment` (exceptionStatus `open`). Event `invoice_exception_opened`. Never confirms automatically."
  },
  {
    id: "S10-accept-late-payment",
    source: "spec",
    note: "DESIGN adds the status event where the status moves (`invoice_confirmed`, confirmedAt) and requires the late payment's confirmations (D12)",
    from: ["expired", "voided"],
    trigger: "merchant closes exception with `accept_late_payment`",
    condition: "open late_payment exception",
    to: "confirmed",
    events: ["invoice_confirmed", "invoice_exception_closed"],
    sets: ["confirmedAt", "exceptionAction", "exceptionNote", "exceptionClosedAt"],
    exception: { closes: true },
    words:
      "expired or voided with open late_payment exception | merchant closes exception with `accept_late_payment` | none | confirmed | exceptionStatus `closed`, exceptionAction, exceptionNote and exceptionClosedAt recorded. Event `invoice_exception_closed`."
  },
  // The spec's rules after the table.
  {
    id: "R1-exception-types",
    source: "spec",
    from: [...STATUSES],
    trigger: "any",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    words: "1. Exceptions are opened only for `partial_payment` and `late_payment`."
  },
  {
    id: "R2-overpayment",
    source: "spec",
    from: [...DETECTION_SOURCES, "confirmed"],
    trigger: "overpayment during the payable window",
    condition: "on time",
    to: "unchanged",
    events: [],
    sets: [],
    words:
      "2. Overpayment during the payable window opens no exception. The invoice stays in its lifecycle state, which may be `confirmed`. `paymentCoverage` is `overpayment` and the excess is in `paymentSummary.overpaymentAmountUsd`."
  },
  {
    id: "R3-close-fields",
    source: "spec",
    from: ["expired", "voided", "confirmed"],
    trigger: "merchant closes exception",
    condition: "open exception",
    to: "unchanged",
    events: ["invoice_exception_closed"],
    sets: ["exceptionAction", "exceptionNote", "exceptionClosedAt"],
    exception: { closes: true },
    words:
      "3. Closing an exception records `exceptionStatus` = `closed`, `exceptionAction`, `exceptionNote` and `exceptionClosedAt`. These appear on merchant-facing invoices and webhook payloads."
  },
  {
    id: "T1-on-time-at-deadline",
    source: "spec",
    from: [...DETECTION_SOURCES],
    trigger: "payment first observed at payableUntilAt",
    condition: "on time",
    to: "unchanged",
    events: [],
    sets: [],
    words: "Timing rule: a payment first observed at or before `paymentTiming.payableUntilAt` is on time. A payment first observed after it is late."
  },
  {
    id: "T2-due-date-grace",
    source: "spec",
    from: [...DETECTION_SOURCES],
    trigger: "payment during the grace period of a due-date invoice",
    condition: "on time",
    to: "unchanged",
    events: [],
    sets: [],
    words: "Due-date timing: payableUntilAt (end of the grace period; final payable deadline)."
  },
  {
    id: "F1-last-transaction-hash",
    source: "spec",
    from: [...STATUSES],
    trigger: "payment evidence changes",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    words: "lastTransactionHash | string or null | Latest transaction hash observed for invoice-counted payment evidence."
  },
  {
    id: "F3-last-payment",
    source: "spec",
    note: "interpretation: every observed payment event counts, invalidated or not (unlike lastTransactionHash, which the spec limits to invoice-counted evidence)",
    from: [...STATUSES],
    trigger: "payment evidence changes",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    words: "lastPaymentOptionId | string or null | Latest observed payment option. lastPaymentObservedAt | string or null | Time of the latest observed payment event."
  },
  {
    id: "F2-coverage-and-amounts",
    source: "spec",
    from: [...STATUSES],
    trigger: "payment evidence changes",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    words:
      "receivedAmountUsd: USD received across all valid payment options. confirmedAmountUsd: USD that has reached the confirmation threshold. paymentCoverage: no_payment, partial_payment, exact_payment, overpayment."
  },
  // DESIGN.md's lifecycle decisions (the "not shown" parts).
  {
    id: "D1-back-to-awaiting",
    source: "design",
    from: ["partially_paid", "payment_detected"],
    trigger: "a chain reorganisation invalidates evidence",
    condition: "no on-time payment left",
    to: "awaiting_payment",
    events: [],
    sets: [],
    words: "On-time evidence moves the status forward and, when a chain reorganisation invalidates evidence, back: awaiting_payment ⇄ partially_paid ⇄ payment_detected."
  },
  {
    id: "D2-confirmed-is-final",
    source: "design",
    from: ["confirmed"],
    trigger: "a chain reorganisation invalidates evidence",
    condition: "reorganisation not settled",
    to: "unchanged",
    events: [],
    sets: [],
    words: "`confirmed` is final for the lifecycle; an invalidation after it is recorded on the payment and logged, never silently undone."
  },
  {
    id: "D3-detected-does-not-expire",
    source: "design",
    from: ["payment_detected"],
    trigger: "final payable deadline elapses",
    condition: "sufficient on-time payment",
    to: "unchanged",
    events: [],
    sets: [],
    words: "An invoice with sufficient on-time payment (`payment_detected`) does not expire: it waits for confirmations."
  },
  {
    id: "D4-expired-with-partial",
    source: "design",
    from: ["partially_paid"],
    trigger: "final payable deadline elapses before sufficient payment",
    condition: "partial on-time payment",
    to: "expired",
    events: ["invoice_expired", "invoice_exception_opened"],
    sets: [],
    exception: { opens: "partial_payment" },
    words: "An invoice that expires with a partial payment opens a `partial_payment` exception."
  },
  {
    id: "D5-void-ends-window",
    source: "design",
    from: ["voided"],
    trigger: "payment observed after the invoice was voided",
    condition: "late",
    to: "unchanged",
    events: ["invoice_exception_opened"],
    sets: [],
    exception: { opens: "late_payment" },
    words: "A voided invoice's payable window ends when it is voided."
  },
  {
    id: "D6-late-partial",
    source: "design",
    from: ["expired", "voided"],
    trigger: "late payment observed, total below required amount",
    condition: "no exception open",
    to: "unchanged",
    events: ["invoice_exception_opened"],
    sets: [],
    exception: { opens: "partial_payment" },
    words: "On an `expired` or `voided` invoice enough of it opens `late_payment`, less of it opens `partial_payment` (when no exception is open already)."
  },
  {
    id: "D7-reopen-after-closed",
    source: "design",
    note: "interpretation: the new exception's action, note and closedAt are null (the closed one's are replaced)",
    from: ["expired", "voided"],
    trigger: "late payment observed after an exception was closed",
    condition: "exception closed",
    to: "unchanged",
    events: ["invoice_exception_opened"],
    sets: [],
    exception: { opens: "late_payment" },
    words: "After a closed one, new late evidence opens a new exception whose fields replace the closed one's, as the spec's table says."
  },
  {
    id: "D8-accept-late-only-for-late",
    source: "design",
    from: ["expired", "voided"],
    trigger: "merchant closes a partial_payment exception with `accept_late_payment`",
    condition: "open partial_payment exception",
    to: "unchanged",
    events: [],
    sets: [],
    http: 409,
    words: "`accept_late_payment` (late_payment only) → `confirmed`."
  },
  {
    id: "D9-close-mark-paid-out-of-band",
    source: "design",
    from: ["expired", "voided"],
    trigger: "merchant closes exception with `mark_paid_out_of_band`",
    condition: "open exception",
    to: "paid_out_of_band",
    events: ["invoice_payment_recorded", "invoice_exception_closed"],
    sets: ["paidOutOfBandAt", "paidOutOfBandNote", "exceptionAction", "exceptionNote", "exceptionClosedAt"],
    exception: { closes: true },
    words:
      "`mark_paid_out_of_band` → `paid_out_of_band` (sets `paidOutOfBandAt`, note = the exception note). Each emits `invoice_exception_closed`, plus the status event where the status moves."
  },
  {
    id: "D10-close-unpaid",
    source: "design",
    from: ["expired", "voided", "confirmed"],
    trigger: "merchant closes exception with `close_unpaid`",
    condition: "open exception",
    to: "unchanged",
    events: ["invoice_exception_closed"],
    sets: ["exceptionAction", "exceptionNote", "exceptionClosedAt"],
    exception: { closes: true },
    words: "`close_unpaid` → status unchanged."
  },
  {
    id: "D11-record-payment-closes-exception",
    source: "design",
    from: ["expired"],
    trigger: "POST record-payment",
    condition: "open exception",
    to: "paid_out_of_band",
    events: ["invoice_payment_recorded", "invoice_exception_closed"],
    sets: ["paidOutOfBandAt", "paidOutOfBandNote", "exceptionAction", "exceptionNote", "exceptionClosedAt"],
    exception: { closes: true },
    words: "record-payment on an invoice with an open exception closes it with `mark_paid_out_of_band`."
  },
  {
    id: "D12-accept-needs-confirmations",
    source: "design",
    from: ["expired", "voided"],
    trigger: "merchant closes exception with `accept_late_payment`",
    condition: "late payment below the required confirmations",
    to: "unchanged",
    events: [],
    sets: [],
    http: 409,
    words:
      "`accept_late_payment` needs the late payment to have reached the network's required confirmations: before that it answers 409 `The late payment has <n> of <m> confirmations; accept it once it is confirmed`."
  },
  {
    id: "D13-reorg-settles-short",
    source: "design",
    from: ["confirmed"],
    trigger: "the reorganisation settles and the invoice is still short",
    condition: "no exception yet",
    to: "unchanged",
    events: ["invoice_exception_opened"],
    sets: [],
    exception: { opens: "partial_payment" },
    words:
      "When invalidated evidence leaves a confirmed invoice short of its amount, the status stays `confirmed`. Only if the invoice is still short then does a `partial_payment` exception open with `invoice_exception_opened`. Re-inclusion of the same transaction changes nothing."
  },
  {
    id: "D14-chain-time-decides",
    source: "design",
    from: [...DETECTION_SOURCES],
    trigger: "payment with chain time at or before payableUntilAt processed after it (mempool before the deadline, mined after)",
    condition: "on time",
    to: "unchanged",
    events: [],
    sets: [],
    words: "Chain time decides lateness: evidence is on time when its chain time (block time, or first sighting in the mempool) is at or before `payableUntilAt`."
  },
  {
    id: "D15-sweeper-waits-for-watcher",
    source: "design",
    from: ["awaiting_payment", "partially_paid"],
    trigger: "deadline sweep while a watcher of an option's network lags before the deadline",
    condition: "watcher chain time before payableUntilAt",
    to: "unchanged",
    events: [],
    sets: [],
    words: "The sweeper does not expire an invoice while a watcher of one of its options' networks has processed chain data only up to a time before the deadline."
  },
  {
    id: "D16-record-payment-refused",
    source: "design",
    from: ["payment_detected", "confirmed", "paid_out_of_band", "voided"],
    trigger: "POST record-payment",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    http: 409,
    words: "record-payment from any status other than `awaiting_payment`, `partially_paid`, `expired`: 409."
  },
  {
    id: "D17-confirmations",
    source: "design",
    note:
      "interpretation: the gating count is the highest k such that the valid payments with at least k confirmations cover the amount (an overpayment beyond it does not lower it); while they all fall short, the smallest count",
    from: [...STATUSES],
    trigger: "payment evidence changes",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    words: "`confirmations` is the smallest confirmation count among the payments counted toward the invoice (the one that gates confirmation); 0 when none."
  },
  {
    id: "D18-outbox-once",
    source: "design",
    from: [...STATUSES],
    trigger: "any change",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    words: "Every status change and every exception change writes its webhook event to an outbox table in the same database transaction as the change itself."
  },
  {
    id: "D19-late-type-follows-total",
    source: "design",
    note:
      "interpretation: S9 applies while a partial_payment exception is open (it becomes late_payment); an invalidation that leaves less than the amount turns an open late_payment back to partial_payment (D6)",
    from: ["expired", "voided"],
    trigger: "late payment brings the total to the required amount",
    condition: "open partial_payment exception",
    to: "unchanged",
    events: ["invoice_exception_opened"],
    sets: [],
    exception: { becomes: "late_payment" },
    words: "expired or voided | late full payment observed | … | Opens exception of type `late_payment`."
  },
  {
    id: "D20-close-needs-open-exception",
    source: "design",
    note: "interpretation: the dashboard's close answers 409 like void when no exception is open",
    from: [...STATUSES],
    trigger: "merchant closes exception",
    condition: "no open exception",
    to: "unchanged",
    events: [],
    sets: [],
    http: 409,
    words: "Closing an exception (dashboard only, with `action` and `note`)."
  },
  {
    id: "D21-reorg-close-mark-paid-out-of-band",
    source: "design",
    from: ["confirmed"],
    trigger: "merchant closes a reorganisation exception with `mark_paid_out_of_band`",
    condition: "open exception",
    to: "unchanged",
    events: ["invoice_exception_closed"],
    sets: ["paidOutOfBandAt", "paidOutOfBandNote", "exceptionAction", "exceptionNote", "exceptionClosedAt"],
    exception: { closes: true },
    words:
      "`confirmed` stays final: closing such an exception with `mark_paid_out_of_band` records `paidOutOfBandAt` and `paidOutOfBandNote` (the merchant vouches for money the chain no longer shows) and leaves the status `confirmed`."
  },
  {
    id: "D22-only-new-late-payment-reopens",
    source: "design",
    from: ["expired", "voided"],
    trigger: "a late payment the merchant already reviewed confirms (or is re-included)",
    condition: "exception closed",
    to: "unchanged",
    events: [],
    sets: [],
    words: "After a closed one, new late evidence opens a new exception: a confirmation of a payment the merchant has already reviewed is not new money to review."
  },
  {
    id: "D23-loss-after-closed-reopens",
    source: "design",
    note:
      "interpretation: each settled loss of a counted payment is a new loss, so after a closed exception it opens a new one whose fields replace the closed one's (as D7 does for late evidence)",
    from: ["confirmed"],
    trigger: "another invalidation leaves the invoice short once it settles, after its exception was closed",
    condition: "exception closed",
    to: "unchanged",
    events: ["invoice_exception_opened"],
    sets: [],
    exception: { opens: "partial_payment" },
    words:
      "`confirmed` is final for the lifecycle; an invalidation after it is recorded on the payment and logged, never silently undone. Only if the invoice is still short then does a `partial_payment` exception open with `invoice_exception_opened`, so the merchant is told. Never silent, never a false alarm."
  },
  {
    id: "I2-reinclusion-after-mempool",
    source: "design",
    from: [...DETECTION_SOURCES],
    trigger: "evidence first seen in the mempool, dropped, then seen there again",
    condition: "invalidated",
    to: "unchanged",
    events: [],
    sets: [],
    words:
      "Evidence identity: (network, transaction hash, output index). A mempool sighting of invalidated evidence brings the same payment back; of counted evidence, it changes nothing."
  },
  {
    id: "I3-confirms-afresh",
    source: "design",
    from: [...STATUSES],
    trigger: "evidence re-included after an invalidation",
    condition: "below its required confirmations",
    to: "unchanged",
    events: [],
    sets: [],
    words: "Evidence that comes back after an invalidation (re-mined after a reorg) confirms afresh: its earlier confirmation does not count."
  },
  {
    id: "I1-evidence-once",
    source: "design",
    from: [...STATUSES],
    trigger: "the same evidence reported again, in any order, after invalidation and re-inclusion, or concurrently",
    condition: "none",
    to: "unchanged",
    events: [],
    sets: [],
    words: "Evidence identity: (network, transaction hash, output index). The same transaction mined again … is the same payment and changes nothing."
  }
]

export const rowById = (id: string): TransitionRow => {
  const row = TRANSITIONS.find((candidate) => candidate.id === id)
  if (row === undefined) throw new Error(`no transition row ${id}`)
  return row
}

/** The event a status is entered with (the spec's event kinds). */
export const STATUS_EVENT: Readonly<Partial<Record<Status, EventName>>> = {
  partially_paid: "invoice_partially_paid",
  payment_detected: "invoice_payment_detected",
  confirmed: "invoice_confirmed",
  expired: "invoice_expired",
  voided: "invoice_voided",
  paid_out_of_band: "invoice_payment_recorded"
}
