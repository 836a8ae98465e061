import { Schema } from "effect"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { summarize } from "../../src/domain/Coverage.ts"
import { type InvoiceRecord, OutboxEvent, Payment, type PaymentRecord } from "../../src/domain/Invoice.ts"
import type { InvoiceStatus } from "../../src/domain/Statuses.ts"
import { applyDecision } from "../../src/lifecycle/ApplyDecision.ts"
import { resolveTiming } from "../../src/domain/Timing.ts"
import type { InvoiceEvent } from "../../src/lifecycle/InvoiceMachine.ts"
import { decide, initialDecision } from "../../src/lifecycle/Lifecycle.ts"
import { applyEvents, isLateEvidence, lifecycleStateOf, settle } from "../../src/lifecycle/Settlement.ts"
import { AMOUNT, exceptionOf, type Model, modelStep, newModel, paidMicros, type Step, stepArb } from "../support/LifecycleModel.ts"
import { invoiceRecord } from "../support/InvoiceFixtures.ts"

const decodePayment = Schema.decodeSync(Payment)
const decodeEvent = Schema.decodeSync(OutboxEvent)
const START = new Date("2026-01-01T00:00:00.000Z")
/** Runs per property (fewer under `npm run test:mutation`, which runs these once per mutant). */
const RUNS = Number(process.env.PROPERTY_RUNS ?? 400)

const STATUS_EVENT: Partial<Record<InvoiceStatus, string>> = {
  partially_paid: "invoice_partially_paid",
  payment_detected: "invoice_payment_detected",
  confirmed: "invoice_confirmed",
  expired: "invoice_expired",
  voided: "invoice_voided",
  paid_out_of_band: "invoice_payment_recorded"
}

const ALLOWED: ReadonlyArray<string> = [
  "awaiting_payment>partially_paid",
  "awaiting_payment>payment_detected",
  "awaiting_payment>confirmed",
  "awaiting_payment>expired",
  "awaiting_payment>voided",
  "awaiting_payment>paid_out_of_band",
  "partially_paid>awaiting_payment",
  "partially_paid>payment_detected",
  "partially_paid>confirmed",
  "partially_paid>expired",
  "partially_paid>paid_out_of_band",
  "payment_detected>awaiting_payment",
  "payment_detected>partially_paid",
  "payment_detected>confirmed",
  // a reorganisation after the deadline: back below the amount, then expired, in one settlement
  "payment_detected>expired",
  "expired>confirmed",
  "expired>paid_out_of_band",
  "voided>confirmed",
  "voided>paid_out_of_band"
]

/** The system under test: the pure rules the service runs, applied to an in-memory invoice. */
interface World {
  invoice: InvoiceRecord
  payments: Array<PaymentRecord>
  now: Date
  outbox: Array<OutboxEvent>
  seq: number
}

const newWorld = (): World => {
  const initial = initialDecision()
  const invoice = invoiceRecord({ amountMicros: AMOUNT, createdAt: START, status: initial.state.status })
  return { invoice, payments: [], now: START, outbox: [decodeEvent({ invoiceId: "inv", merchantId: "m", event: "invoice_created" })], seq: 0 }
}

const apply = (world: World, settled: { invoice: InvoiceRecord; events: ReadonlyArray<OutboxEvent> }) => {
  world.invoice = settled.invoice
  world.outbox.push(...settled.events)
}

const direct = (world: World, event: InvoiceEvent, note?: string) => {
  const decision = decide(lifecycleStateOf(world.invoice), event)
  if (decision === undefined) return
  apply(world, applyDecision(world.invoice, decision, {
    now: world.now,
    note,
    closeAction: event.type === "CLOSE_EXCEPTION" ? event.action : undefined
  }))
}

const run = (world: World, step: Step) => {
  switch (step.kind) {
    case "pay": {
      const late = isLateEvidence(world.invoice, world.now)
      world.payments.push(decodePayment({
        id: `p${world.seq}`,
        invoiceId: "inv",
        paymentOptionId: "opt",
        assetCode: "USDC",
        network: "ethereum",
        destinationAddress: null,
        transactionHash: `0x${world.seq++}`,
        outputIndex: 0,
        decimals: 6,
        amountAtomic: paidMicros(step),
        observedTotalAtomic: paidMicros(step),
        usdMicros: paidMicros(step),
        quotedAtomic: world.invoice.amountMicros,
        confirmations: step.confirmed ? 12 : 0,
        late,
        observedAt: world.now,
        confirmedAt: step.confirmed ? world.now : null,
        invalidatedAt: null,
        invalidationReason: null
      }))
      return apply(world, settle(world.invoice, world.payments, world.now, { late, newLatePayment: true }))
    }
    case "confirm":
    case "invalidate":
    case "replay": {
      const payment = world.payments[step.index]
      if (payment === undefined) return
      if (step.kind === "confirm" && payment.confirmedAt === null && payment.invalidatedAt === null) {
        world.payments[step.index] = { ...payment, confirmations: 12, confirmedAt: world.now }
      } else if (step.kind === "invalidate" && payment.invalidatedAt === null) {
        world.payments[step.index] = { ...payment, invalidatedAt: world.now, invalidationReason: "reorg" }
      } else {
        return // unchanged evidence: the service returns before settling
      }
      // As PaymentEvidence.invalidate without a reorg point (the simulator): the invoice is judged at once.
      return apply(world, settle(world.invoice, world.payments, world.now, { late: payment.late, reorgSettled: step.kind === "invalidate" }))
    }
    case "advance":
      world.now = new Date(world.now.getTime() + step.minutes * 60_000)
      return
    case "sweep":
      if (world.now.getTime() > world.invoice.timing.payableUntilAt.getTime()) {
        apply(world, applyEvents(world.invoice, [{ type: "DEADLINE_PASSED" }], world.now))
      }
      return
    case "void":
      return direct(world, { type: "VOID" })
    case "record":
      return direct(world, { type: "RECORD_PAYMENT" }, "recorded")
    case "close":
      return direct(world, { type: "CLOSE_EXCEPTION", action: step.action }, "closed")
  }
}

const sumWhere = (payments: ReadonlyArray<PaymentRecord>, predicate: (payment: PaymentRecord) => boolean) =>
  payments.filter((payment) => payment.invalidatedAt === null && predicate(payment)).reduce((sum, payment) => sum + payment.usdMicros, 0n)

describe("invoice lifecycle properties", () => {
  it("holds every rule over random command sequences", () => {
    fc.assert(
      fc.property(fc.array(stepArb, { maxLength: 40 }), (steps) => {
        const world = newWorld()
        const stamped: Record<string, string> = {}
        for (const step of steps) {
          const before = world.invoice
          const outboxBefore = world.outbox.length
          const confirmedOnTimeBefore = sumWhere(world.payments, (payment) => !payment.late && payment.confirmedAt !== null)
          run(world, step)
          const after = world.invoice
          const emitted = world.outbox.slice(outboxBefore).map((event) => event.event)

          if (before.status !== after.status) {
            // only allowed transitions happen
            expect(ALLOWED, `${before.status}>${after.status} via ${step.kind}`).toContain(`${before.status}>${after.status}`)
            // each status change emits its status event (none exists for awaiting_payment); a settlement
            // may pass through one intermediate status (reorg, then expiry), which emits its own event
            const expected = STATUS_EVENT[after.status]
            const statusEvents = emitted.filter((event) => Object.values(STATUS_EVENT).includes(event))
            if (expected === undefined) expect(statusEvents).toEqual([])
            else expect(statusEvents.at(-1)).toBe(expected)
            expect(statusEvents.length).toBeLessThanOrEqual(2)
            expect(new Set(statusEvents).size).toBe(statusEvents.length)
          } else {
            expect(emitted.filter((event) => Object.values(STATUS_EVENT).includes(event))).toEqual([])
          }
          // confirmed never reverts
          if (before.status === "confirmed") expect(after.status).toBe("confirmed")
          // late payment never confirms by itself: evidence confirms only with enough on-time confirmed funds
          if (after.status === "confirmed" && before.status !== "confirmed" && step.kind !== "close") {
            const onTimeConfirmed = sumWhere(world.payments, (payment) => !payment.late && payment.confirmedAt !== null)
            expect(onTimeConfirmed >= AMOUNT || confirmedOnTimeBefore >= AMOUNT).toBe(true)
          }
          if (step.kind === "close" && after.status === "confirmed" && before.status !== "confirmed") {
            expect(step.action).toBe("accept_late_payment")
            expect(before.exceptionType).toBe("late_payment")
          }
          // exceptions only for late and partial payments, only on expired or voided invoices when opened,
          // or as partial_payment on a confirmed invoice that a reorganisation left short of its amount
          if (after.exceptionStatus === "open") {
            expect(["late_payment", "partial_payment"]).toContain(after.exceptionType)
            if (after.status === "confirmed") {
              expect(after.exceptionType).toBe("partial_payment")
              if (before.exceptionStatus !== "open") {
                expect(step.kind).toBe("invalidate")
                expect(after.receivedMicros < AMOUNT).toBe(true)
                expect(emitted).toContain("invoice_exception_opened")
              }
            } else {
              expect(["expired", "voided"]).toContain(after.status)
            }
          }
          // a confirmed invoice never loses sight of evidence it no longer has: short means an exception was opened
          if (after.status === "confirmed" && after.receivedMicros < AMOUNT && after.exceptionStatus !== "closed") {
            expect(after.exceptionStatus).toBe("open")
          }
          // and no loss is silent: one that leaves it short opens an exception unless one is open, a closed one too
          if (before.status === "confirmed" && after.receivedMicros < before.receivedMicros && after.receivedMicros < AMOUNT && before.exceptionStatus !== "open") {
            expect(emitted).toContain("invoice_exception_opened")
          }
          // amounts agree with the counted payments and are never negative
          const received = sumWhere(world.payments, () => true)
          expect(after.receivedMicros).toBe(received)
          expect(after.confirmedMicros).toBe(sumWhere(world.payments, (payment) => payment.confirmedAt !== null))
          const summary = summarize(AMOUNT, after.receivedMicros, after.confirmedMicros)
          expect(summary.remainingMicros >= 0n && summary.overpaymentMicros >= 0n).toBe(true)
          expect(summary.remainingMicros - summary.overpaymentMicros).toBe(AMOUNT - received)
          // timestamps are set once; a new exception starts unreviewed, so its close is stamped anew
          if (emitted.includes("invoice_exception_opened")) {
            expect([after.exceptionAction, after.exceptionNote, after.exceptionClosedAt]).toEqual([null, null, null])
            delete stamped.exceptionClosedAt
          }
          for (const field of ["paymentDetectedAt", "confirmedAt", "paidOutOfBandAt", "exceptionClosedAt", "voidedAt"] as const) {
            const value = after[field]?.toISOString()
            if (stamped[field] !== undefined) expect(value).toBe(stamped[field])
            else if (value !== undefined) stamped[field] = value
          }
        }
      }),
      { numRuns: RUNS }
    )
  })

  it("opens no exception for overpayment inside the payable window", () => {
    fc.assert(
      fc.property(fc.array(fc.constantFrom(30, 60, 120), { minLength: 1, maxLength: 6 }), fc.boolean(), (usds, confirmed) => {
        const world = newWorld()
        for (const usd of usds) run(world, { kind: "pay", usd, confirmed })
        expect(world.invoice.exceptionStatus).toBeNull()
      })
    )
  })
})

describe("timing rule", () => {
  it("is on time at payableUntilAt exactly and late one millisecond later, for both timing shapes", () => {
    fc.assert(
      fc.property(
        fc.date({ min: new Date("2020-01-01"), max: new Date("2035-01-01"), noInvalidDate: true }),
        fc.oneof(
          fc.record({ mode: fc.constant("immediate" as const), expiresAfterMinutes: fc.integer({ min: 5, max: 10_080 }) }),
          fc.record({ mode: fc.constant("due_date" as const), dueAfterDays: fc.integer({ min: 1, max: 365 }), gracePeriodDays: fc.integer({ min: 0, max: 90 }) })
        ),
        (createdAt, timing) => {
          const resolved = resolveTiming(timing, createdAt)
          // The rule as the evidence path applies it, on an invoice still open.
          const invoice = { status: "awaiting_payment", timing: resolved } as InvoiceRecord
          expect(isLateEvidence(invoice, resolved.payableUntilAt)).toBe(false)
          expect(isLateEvidence(invoice, new Date(resolved.payableUntilAt.getTime() + 1))).toBe(true)
        }
      )
    )
  })
})

class StepCommand implements fc.Command<Model, World> {
  readonly step: Step
  constructor(step: Step) {
    this.step = step
  }
  check = () => true
  run(model: Model, world: World) {
    modelStep(model, this.step)
    run(world, this.step)
    expect({ status: world.invoice.status, exception: exceptionOf(world.invoice) }).toEqual({ status: model.status, exception: model.exception })
  }
  toString = () => JSON.stringify(this.step)
}

describe("lifecycle against a reference model", () => {
  it("agrees with the model on status and exception after every command (fc.commands)", () => {
    fc.assert(
      fc.property(fc.commands([stepArb.map((step) => new StepCommand(step))], { maxCommands: 40 }), (commands) => {
        fc.modelRun(() => ({ model: newModel(START.getTime(), START.getTime() + 60 * 60_000), real: newWorld() }), commands)
      }),
      { numRuns: RUNS }
    )
  })

  it("agrees with the model when late payments and closes come often (new late evidence after a closed exception)", () => {
    const lateArb = fc.constantFrom<Step>(
      { kind: "advance", minutes: 61 },
      { kind: "pay", usd: 25, confirmed: true },
      { kind: "pay", usd: 100, confirmed: true },
      { kind: "close", action: "close_unpaid" },
      { kind: "close", action: "accept_late_payment" }
    )
    fc.assert(
      fc.property(fc.commands([stepArb, lateArb, lateArb].map((arbitrary) => arbitrary.map((step) => new StepCommand(step))), { maxCommands: 40 }), (commands) => {
        fc.modelRun(() => ({ model: newModel(START.getTime(), START.getTime() + 60 * 60_000), real: newWorld() }), commands)
      }),
      { numRuns: RUNS }
    )
  })

  it("agrees with the model when confirmed invoices lose payments and closes come often (a loss after a closed exception)", () => {
    const lossArb = fc.constantFrom<Step>(
      { kind: "pay", usd: 60, confirmed: true },
      { kind: "invalidate", index: 0 },
      { kind: "invalidate", index: 1 },
      { kind: "invalidate", index: 2 },
      { kind: "close", action: "close_unpaid" },
      { kind: "close", action: "mark_paid_out_of_band" }
    )
    fc.assert(
      fc.property(fc.commands([stepArb, lossArb, lossArb].map((arbitrary) => arbitrary.map((step) => new StepCommand(step))), { maxCommands: 40 }), (commands) => {
        fc.modelRun(() => ({ model: newModel(START.getTime(), START.getTime() + 60 * 60_000), real: newWorld() }), commands)
      }),
      { numRuns: RUNS }
    )
  })
})
