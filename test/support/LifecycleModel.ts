import fc from "fast-check"
import { Micros } from "../../src/domain/Money.ts"
import type { ExceptionCloseAction, InvoiceStatus } from "../../src/domain/Statuses.ts"

/**
 * A reference model of one invoice's lifecycle, written independently of the statechart: plain
 * rules over totals. The property suites run random command sequences against it and the real
 * lifecycle (the pure rules in test/property, the services over a database in test/integration).
 */

/** The invoice amount the model assumes: 100 USD in micros. */
export const AMOUNT = Micros.make(100_000_000n)

export type Step =
  /** `usd` to the cent; `unit`: one smallest unit (of a 6-decimal stablecoin at 1:1, one micro-dollar) over or short. */
  | { kind: "pay"; usd: number; unit?: -1 | 0 | 1; confirmed: boolean }
  | { kind: "confirm"; index: number }
  | { kind: "invalidate"; index: number }
  | { kind: "replay"; index: number }
  | { kind: "advance"; minutes: number }
  | { kind: "sweep" }
  | { kind: "void" }
  | { kind: "record" }
  | { kind: "close"; action: ExceptionCloseAction }

/** Whole amounts, amounts to the cent, and the cent edges of the 100 USD invoice. */
export const usdArb: fc.Arbitrary<number> = fc.oneof(
  fc.constantFrom(10, 25, 50, 100, 120),
  fc.integer({ min: 1, max: 12_000 }).map((cents) => cents / 100),
  fc.constantFrom(99.99, 100.01, 0.01, 33.33, 66.67, 50.01, 49.99)
)

/** A payment's micro-dollars (its atomic amount in a 6-decimal stablecoin quoted 1:1). */
export const paidMicros = (step: { readonly usd: number; readonly unit?: -1 | 0 | 1 | undefined }): bigint => BigInt(Math.round(step.usd * 100)) * 10_000n + BigInt(step.unit ?? 0)

export const stepArb: fc.Arbitrary<Step> = fc.oneof(
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("pay" as const), usd: usdArb, unit: fc.constantFrom(-1, 0, 0, 1), confirmed: fc.boolean() }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("confirm" as const), index: fc.nat(6) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("invalidate" as const), index: fc.nat(6) }) },
  { weight: 1, arbitrary: fc.record({ kind: fc.constant("replay" as const), index: fc.nat(6) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("advance" as const), minutes: fc.constantFrom(1, 30, 61) }) },
  { weight: 1, arbitrary: fc.constant({ kind: "sweep" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "void" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "record" as const }) },
  { weight: 1,
    arbitrary: fc.record({ kind: fc.constant("close" as const), action: fc.constantFrom<ExceptionCloseAction>("accept_late_payment", "mark_paid_out_of_band", "close_unpaid") }) }
)

export type ModelException = "none" | "open:late_payment" | "open:partial_payment" | "closed"

export interface ModelPayment {
  usd: bigint
  late: boolean
  confirmed: boolean
  valid: boolean
}

export interface Model {
  status: InvoiceStatus
  exception: ModelException
  payments: Array<ModelPayment>
  /** Epoch milliseconds; payments observed after `deadline` are late. */
  now: number
  deadline: number
}

export const newModel = (now: number, deadline: number): Model => ({ status: "awaiting_payment", exception: "none", payments: [], now, deadline })

export const modelSums = (model: Model) => {
  let onTime = 0n
  let onTimeConfirmed = 0n
  let total = 0n
  let confirmed = 0n
  for (const payment of model.payments) {
    if (!payment.valid) continue
    total += payment.usd
    if (payment.confirmed) confirmed += payment.usd
    if (!payment.late) {
      onTime += payment.usd
      if (payment.confirmed) onTimeConfirmed += payment.usd
    }
  }
  return { onTime, onTimeConfirmed, total, confirmed }
}

/** `newLate`: the evidence is a newly observed late payment (a confirmation or invalidation is not); `lost`: a counted payment was invalidated. */
const modelEvidence = (model: Model, newLate: boolean, lost: boolean) => {
  const { onTime, onTimeConfirmed, total } = modelSums(model)
  if (model.status === "awaiting_payment" || model.status === "partially_paid" || model.status === "payment_detected") {
    model.status = onTime === 0n
      ? "awaiting_payment"
      : onTime < AMOUNT
      ? "partially_paid"
      : onTimeConfirmed >= AMOUNT
      ? "confirmed"
      : "payment_detected"
  } else if (model.status === "expired" || model.status === "voided") {
    if (model.exception === "none" && total > 0n) model.exception = total >= AMOUNT ? "open:late_payment" : "open:partial_payment"
    else if (model.exception === "open:partial_payment" && total >= AMOUNT) model.exception = "open:late_payment"
    else if (model.exception === "open:late_payment" && total < AMOUNT) model.exception = "open:partial_payment"
    // after a closed exception, new late money opens a new one (the spec's row holds whatever came before)
    else if (model.exception === "closed" && newLate && total > 0n) model.exception = total >= AMOUNT ? "open:late_payment" : "open:partial_payment"
  } else if (model.status === "confirmed") {
    // confirmed is final: a reorganisation that leaves it short opens a partial_payment exception,
    // and another loss after the merchant closed that one opens a new one
    if ((model.exception === "none" || (model.exception === "closed" && lost)) && total < AMOUNT) model.exception = "open:partial_payment"
  }
}

const modelDeadline = (model: Model) => {
  if (model.status === "partially_paid" && model.exception === "none") model.exception = "open:partial_payment"
  if (model.status === "awaiting_payment" || model.status === "partially_paid") model.status = "expired"
}

/**
 * Re-evaluates the invoice after its evidence changed; `latestLate` says whether the changed payment
 * is late, `change` whether it was just observed (not confirmed, invalidated or re-included) or invalidated.
 */
export const modelSettle = (model: Model, latestLate: boolean, change: "observed" | "invalidated" | "other" = "other") => {
  const newLate = latestLate && change === "observed"
  const lost = change === "invalidated"
  if (!(latestLate || model.now > model.deadline)) return modelEvidence(model, newLate, lost)
  if (latestLate) {
    modelDeadline(model)
    modelEvidence(model, newLate, lost)
  } else {
    modelEvidence(model, newLate, lost)
    modelDeadline(model)
  }
}

export const modelStep = (model: Model, step: Step) => {
  switch (step.kind) {
    case "pay": {
      const late = model.status === "expired" || model.status === "voided" || model.now > model.deadline
      model.payments.push({ usd: paidMicros(step), late, confirmed: step.confirmed, valid: true })
      return modelSettle(model, late, "observed")
    }
    case "confirm":
    case "invalidate": {
      const payment = model.payments[step.index]
      if (payment === undefined) return
      if (step.kind === "confirm" && !payment.confirmed && payment.valid) payment.confirmed = true
      else if (step.kind === "invalidate" && payment.valid) payment.valid = false
      else return
      return modelSettle(model, payment.late, step.kind === "invalidate" ? "invalidated" : "other")
    }
    case "replay":
      return
    case "advance":
      model.now += step.minutes * 60_000
      return
    case "sweep":
      if (model.now > model.deadline) modelDeadline(model)
      return
    case "void":
      if (model.status === "awaiting_payment") model.status = "voided"
      return
    case "record":
      if (model.status === "awaiting_payment" || model.status === "partially_paid" || model.status === "expired") {
        if (model.status === "expired" && model.exception.startsWith("open")) model.exception = "closed"
        model.status = "paid_out_of_band"
      }
      return
    case "close":
      if (!model.exception.startsWith("open")) return
      if (step.action === "accept_late_payment") {
        if (model.exception !== "open:late_payment") return
        model.status = "confirmed"
      } else if (step.action === "mark_paid_out_of_band" && model.status !== "confirmed") {
        model.status = "paid_out_of_band"
      }
      model.exception = "closed"
  }
}

/** The model's view of an invoice's exception columns. */
export const exceptionOf = (invoice: { readonly exceptionStatus: string | null; readonly exceptionType: string | null }): string =>
  invoice.exceptionStatus === null ? "none" : invoice.exceptionStatus === "closed" ? "closed" : `open:${invoice.exceptionType}`
