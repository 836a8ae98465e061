import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { usdValueOf } from "../../src/domain/Evidence.ts"
import { Micros } from "../../src/domain/Money.ts"
import type { RefundStatus } from "../../src/refunds/Refund.ts"
import { isCandidate, type RefundableInvoice, refundable, type RefundablePayment, refundsToReject, requestable } from "../../src/refunds/Refundable.ts"

/** Runs per property (fewer under `npm run test:mutation`, which runs these once per mutant). */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 1500)
/**
 * Refunds never exceed what is refundable, whatever the order of payments, confirmations,
 * invalidations (and re-inclusions), requests, rejections and the watchers' sightings: random
 * command sequences run against a small reference model of the Refunds service (a request asks for
 * everything `requestable`, side by side with the option's pending requests up to 5 (issue #52);
 * choosing or paying one rejects the others; an invalidation runs `refundsToReject`, as the service
 * does in the invalidation's transaction), checked after every command.
 */

interface Payment extends RefundablePayment {
  readonly index: number
}
interface Refund {
  readonly id: number
  readonly paymentOptionId: string
  readonly amountAtomic: bigint
  status: RefundStatus
  chosenAt: Date | null
  readonly requestedAt: Date
}
interface World {
  readonly invoice: RefundableInvoice
  readonly options: ReadonlyArray<{ readonly id: string; readonly quotedAtomic: bigint }>
  payments: Array<Payment>
  refunds: Array<Refund>
  clock: number
}

type Command =
  | { readonly _tag: "Pay"; readonly option: number; readonly share: number }
  | { readonly _tag: "Confirm"; readonly payment: number }
  | { readonly _tag: "Invalidate"; readonly payment: number }
  | { readonly _tag: "Reinclude"; readonly payment: number }
  | { readonly _tag: "Request"; readonly option: number }
  | { readonly _tag: "Reject"; readonly refund: number }
  | { readonly _tag: "Choose"; readonly refund: number }
  | { readonly _tag: "Send"; readonly refund: number }
  | { readonly _tag: "Complete"; readonly refund: number }

const command: fc.Arbitrary<Command> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ _tag: fc.constant("Pay" as const), option: fc.nat(2), share: fc.integer({ min: 1, max: 150 }) }) },
  { weight: 4, arbitrary: fc.record({ _tag: fc.constant("Confirm" as const), payment: fc.nat(12) }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("Invalidate" as const), payment: fc.nat(12) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Reinclude" as const), payment: fc.nat(12) }) },
  { weight: 3, arbitrary: fc.record({ _tag: fc.constant("Request" as const), option: fc.nat(2) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Reject" as const), refund: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Choose" as const), refund: fc.nat(3) }) },
  { weight: 2, arbitrary: fc.record({ _tag: fc.constant("Send" as const), refund: fc.nat(3) }) },
  { weight: 1, arbitrary: fc.record({ _tag: fc.constant("Complete" as const), refund: fc.nat(3) }) }
)

/** The invoice states a refund can come from, and one it cannot. */
const invoiceState = fc.constantFrom(
  { status: "confirmed", exceptionStatus: null, exceptionAction: null },
  { status: "expired", exceptionStatus: "closed", exceptionAction: "close_unpaid" },
  { status: "expired", exceptionStatus: "closed", exceptionAction: "accept_late_payment" },
  { status: "confirmed", exceptionStatus: "open", exceptionAction: null },
  { status: "partially_paid", exceptionStatus: null, exceptionAction: null }
)

const world = fc.record({
  amountMicros: fc.integer({ min: 1, max: 100_000 }).map((cents) => BigInt(cents) * 10_000n),
  // Stablecoin-like quotes (6 decimals, one unit per dollar) and arbitrary ones (bitcoin-like).
  quotes: fc.array(fc.oneof(fc.constant(0n), fc.bigInt({ min: 1n, max: 10n ** 12n })), { minLength: 3, maxLength: 3 }),
  state: invoiceState
}).map(({ amountMicros, quotes, state }): World => ({
  invoice: { amountMicros, ...state },
  options: quotes.map((quote, index) => ({ id: `option-${index}`, quotedAtomic: quote === 0n ? amountMicros : quote })),
  payments: [],
  refunds: [],
  clock: 0
}))

const at = (model: World) => new Date(++model.clock * 1000)

const apply = (model: World, step: Command) => {
  const payment = "payment" in step ? model.payments[step.payment % Math.max(1, model.payments.length)] : undefined
  const refund = "refund" in step ? model.refunds[step.refund % Math.max(1, model.refunds.length)] : undefined
  const replace = (changed: Payment) => model.payments = model.payments.map((each) => (each.index === changed.index ? changed : each))
  switch (step._tag) {
    case "Pay": {
      const option = model.options[step.option]
      // Between 1% and 150% of the option's quote.
      const amountAtomic = (option.quotedAtomic * BigInt(step.share) + 99n) / 100n
      model.payments.push({
        index: model.payments.length,
        paymentOptionId: option.id,
        amountAtomic,
        usdMicros: usdValueOf(amountAtomic, option.quotedAtomic, Micros.make(model.invoice.amountMicros)),
        observedAt: at(model),
        confirmedAt: null,
        invalidatedAt: null
      })
      return
    }
    case "Confirm":
      if (payment !== undefined && payment.invalidatedAt === null && payment.confirmedAt === null) replace({ ...payment, confirmedAt: at(model) })
      return
    case "Reinclude":
      // Mined again after a reorganisation: it counts once it is confirmed again.
      if (payment !== undefined && payment.invalidatedAt !== null) replace({ ...payment, invalidatedAt: null, confirmedAt: null })
      return
    case "Invalidate": {
      if (payment === undefined || payment.invalidatedAt !== null) return
      replace({ ...payment, invalidatedAt: at(model) })
      const rejected = new Set(refundsToReject(model.invoice, model.options, model.payments, model.refunds).map((each) => each.id))
      for (const each of model.refunds) if (rejected.has(each.id)) each.status = "rejected"
      return
    }
    case "Request": {
      const entry = requestable(model.invoice, model.options, model.payments, model.refunds).find((each) => each.paymentOptionId === model.options[step.option].id)
      if (entry === undefined || model.refunds.filter((each) => each.paymentOptionId === entry.paymentOptionId && isCandidate(each)).length >= 5) return
      model.refunds.push({
        id: model.refunds.length,
        paymentOptionId: entry.paymentOptionId,
        amountAtomic: entry.refundableAtomic,
        status: "requested",
        chosenAt: null,
        requestedAt: at(model)
      })
      return
    }
    case "Reject":
      if (refund?.status === "requested") refund.status = "rejected"
      return
    case "Choose":
      if (refund?.status === "requested") choose(model, refund)
      return
    case "Send":
      if (refund?.status === "requested") {
        // Paying a pending request chooses it (the watchers' sighting).
        choose(model, refund)
        refund.status = "sent"
      }
      return
    case "Complete":
      if (refund?.status === "sent") refund.status = "completed"
      return
  }
}

/** The merchant keeps one request; the option's other pending ones are rejected. */
const choose = (model: World, kept: Refund) => {
  if (kept.chosenAt !== null) return
  kept.chosenAt = at(model)
  for (const other of model.refunds) if (other !== kept && other.paymentOptionId === kept.paymentOptionId && isCandidate(other)) other.status = "rejected"
}

/** What may be refunded on each option (received − kept), whatever the refunds. */
const allowedOf = (model: World) =>
  new Map(refundable(model.invoice, model.options, model.payments, []).map((entry) => [entry.paymentOptionId, entry.receivedAtomic - entry.keptAtomic]))

const check = (model: World) => {
  const allowed = allowedOf(model)
  const entries = refundable(model.invoice, model.options, model.payments, model.refunds)
  for (const option of model.options) {
    const refunds = model.refunds.filter((refund) => refund.paymentOptionId === option.id)
    // At most 5 pending requests side by side, never for nothing; once one is chosen, no other is pending.
    const candidates = refunds.filter(isCandidate)
    expect(candidates.length).toBeLessThanOrEqual(5)
    for (const refund of refunds) expect(refund.amountAtomic).toBeGreaterThan(0n)
    const chosen = refunds.filter((refund) => refund.status !== "rejected" && !isCandidate(refund))
    if (chosen.length > 0) expect(candidates).toEqual([])
    const requested = chosen.filter((refund) => refund.status === "requested").reduce((sum, refund) => sum + refund.amountAtomic, 0n)
    const settled = chosen.filter((refund) => refund.status === "sent" || refund.status === "completed").reduce((sum, refund) => sum + refund.amountAtomic, 0n)
    // A requested refund (chosen, or each pending alternative) always fits in what the option may
    // refund beside those already paid out (money already sent cannot be taken back, so only those
    // may exceed it, after an invalidation).
    if (requested > 0n) expect(settled + requested).toBeLessThanOrEqual(allowed.get(option.id) ?? 0n)
    for (const candidate of candidates) expect(settled + requested + candidate.amountAtomic).toBeLessThanOrEqual(allowed.get(option.id) ?? 0n)
    const entry = entries.find((each) => each.paymentOptionId === option.id)
    if (entry !== undefined) {
      // Only confirmed, valid money is received; the invoice never keeps more than that.
      const confirmed = model.payments.filter((payment) => payment.paymentOptionId === option.id && payment.confirmedAt !== null && payment.invalidatedAt === null)
      expect(entry.receivedAtomic).toBe(confirmed.reduce((sum, payment) => sum + payment.amountAtomic, 0n))
      expect(entry.keptAtomic).toBeGreaterThanOrEqual(0n)
      expect(entry.keptAtomic).toBeLessThanOrEqual(entry.receivedAtomic)
      expect(entry.refundableAtomic).toBe(
        entry.receivedAtomic - entry.keptAtomic - entry.claimedAtomic > 0n ? entry.receivedAtomic - entry.keptAtomic - entry.claimedAtomic : 0n
      )
    }
  }
  const refunding = model.invoice.exceptionStatus === "closed" && model.invoice.exceptionAction === "close_unpaid"
    ? "all"
    : model.invoice.exceptionStatus !== "open" && (model.invoice.status === "confirmed" || model.invoice.exceptionAction === "accept_late_payment")
    ? "overpayment"
    : "none"
  if (refunding === "none") expect(entries).toEqual([])
  if (refunding === "all") { for (const entry of entries) expect(entry.keptAtomic).toBe(0n) }
  if (refunding === "overpayment" && entries.length > 0) {
    // The invoice keeps its amount, rounded in the merchant's favour, and no option keeps more than its whole quote.
    let keptUsd = 0n
    for (const entry of entries) {
      const quoted = model.options.find((option) => option.id === entry.paymentOptionId)!.quotedAtomic
      expect(entry.keptAtomic).toBeLessThanOrEqual(quoted)
      keptUsd += (entry.keptAtomic * model.invoice.amountMicros) / quoted
    }
    expect(keptUsd).toBeGreaterThanOrEqual(model.invoice.amountMicros)
  }
}

describe("refunds (properties)", () => {
  it("never exceed what is refundable, whatever the order of payments, confirmations, invalidations, requests and rejections", () => {
    fc.assert(
      fc.property(world, fc.array(command, { minLength: 1, maxLength: 40 }), (start, steps) => {
        const model: World = { ...start, payments: [], refunds: [], clock: 0 }
        for (const step of steps) {
          apply(model, step)
          check(model)
        }
      }),
      { numRuns: RUNS }
    )
  })

  it("a confirmation never lowers what an option may refund (so only invalidations reject requests)", () => {
    fc.assert(
      fc.property(world, fc.array(command, { minLength: 1, maxLength: 30 }), fc.nat(30), (start, steps, pick) => {
        const model: World = { ...start, payments: [], refunds: [], clock: 0 }
        for (const step of steps) apply(model, step)
        const unconfirmed = model.payments.filter((payment) => payment.confirmedAt === null && payment.invalidatedAt === null)
        if (unconfirmed.length === 0) return
        const before = allowedOf(model)
        apply(model, { _tag: "Confirm", payment: unconfirmed[pick % unconfirmed.length].index })
        const after = allowedOf(model)
        for (const [option, amount] of before) expect(after.get(option) ?? 0n).toBeGreaterThanOrEqual(amount)
      }),
      { numRuns: RUNS }
    )
  })
})
