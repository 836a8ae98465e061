import { expect, it } from "@effect/vitest"
import { Clock, Context, Effect, Exit, Layer, Scope } from "effect"
import { TestClock } from "effect/testing"
import fc from "fast-check"
import { DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import type { MerchantId } from "../../src/domain/Ids.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { exceptionOf, type Model, modelSettle, modelStep, modelSums, newModel, paidMicros, type Step, stepArb } from "../support/LifecycleModel.ts"
import { inPrivateDatabase, SuiteAccount, testServices } from "../support/TestLayers.ts"

/**
 * The reference model of test/support/LifecycleModel.ts against the real services over the
 * database: random command sequences create an invoice, record evidence (replays included),
 * reorganise it away, void, record a payment, sweep deadlines and close exceptions, with time
 * moved by a TestClock, and after every command the stored invoice must agree with the model.
 */

const START = Date.parse("2026-01-01T00:00:00.000Z")
const DEADLINE = START + 60 * 60_000 // the merchant's timing: immediate, 60 minutes
const USDC_ON_ETHEREUM = DEMO_METHODS.filter((method) => method.network === "ethereum")

// The domain services without the HTTP server. The sweeper expires every due invoice of its
// database and runs here on a clock in the past: on a shared PostgreSQL (DATABASE_URL) this suite
// takes a database of its own.
const ModelServices = SuiteAccount.layer({ methods: USDC_ON_ETHEREUM }).pipe(
  Layer.provideMerge(inPrivateDatabase((url) => testServices({}, url === undefined ? {} : { DATABASE_URL: url })))
)

type Services = Invoices | PaymentEvidence | InvoiceExpiry

interface Observation {
  readonly transactionHash: string
  readonly amountAtomic: bigint
  confirmations: number
}

/** One invoice of the real service, and what the chain reported for each of its payments (by model index). */
interface Real {
  readonly run: <A, E>(effect: Effect.Effect<A, E, Services>) => Promise<A>
  readonly merchantId: MerchantId
  readonly invoiceId: string
  readonly optionId: string
  readonly required: number
  readonly observations: Array<Observation>
}

/** Steps toward a late payment and its exception, which uniform steps reach too seldom for a modest run count. */
const lateArb: fc.Arbitrary<Step> = fc.constantFrom<Step>(
  { kind: "advance", minutes: 61 },
  { kind: "pay", usd: 100, confirmed: false },
  { kind: "close", action: "accept_late_payment" }
)

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

/**
 * The model's rules plus two of the service that the pure lifecycle does not have: evidence that
 * comes back after a reorganisation counts again (confirmed afresh when it has the confirmations),
 * and accept_late_payment is refused while any counted payment is unconfirmed.
 */
const expectAfter = (model: Model, step: Step, real: Real) => {
  if (step.kind === "confirm" || step.kind === "replay") {
    const payment = model.payments[step.index]
    if (payment !== undefined && !payment.valid) {
      payment.valid = true
      payment.confirmed = real.observations[step.index].confirmations >= real.required || step.kind === "confirm"
      return modelSettle(model, payment.late)
    }
  }
  if (step.kind === "close" && step.action === "accept_late_payment" && model.payments.some((payment) => payment.valid && !payment.confirmed)) {
    return
  }
  modelStep(model, step)
}

const refusedTransition = <A, R>(effect: Effect.Effect<A, { readonly _tag: string }, R>) =>
  Effect.catchIf(effect, (error) => error._tag === "InvoiceTransitionRejected", () => Effect.void)

const apply = (step: Step, real: Real): Effect.Effect<void, unknown, Services> =>
  Effect.gen(function*() {
    const invoices = yield* Invoices
    const evidence = yield* PaymentEvidence
    const observe = (observation: Observation) =>
      Effect.gen(function*() {
        const observedAt = new Date(yield* Clock.currentTimeMillis)
        yield* evidence.record({
          paymentOptionId: real.optionId,
          transactionHash: observation.transactionHash,
          outputIndex: 0,
          amountAtomic: observation.amountAtomic,
          confirmations: observation.confirmations,
          observedAt
        })
      })
    switch (step.kind) {
      case "pay": {
        const observation = { transactionHash: txHash(), amountAtomic: paidMicros(step), confirmations: step.confirmed ? real.required : 0 }
        yield* observe(observation)
        real.observations.push(observation)
        return
      }
      case "confirm":
      case "replay": {
        const observation = real.observations[step.index]
        if (observation === undefined) return
        if (step.kind === "confirm") observation.confirmations = real.required
        return yield* observe(observation)
      }
      case "invalidate": {
        const observation = real.observations[step.index]
        if (observation === undefined) return
        yield* evidence.invalidate({ network: "ethereum", transactionHash: observation.transactionHash, outputIndex: 0, reason: "reorg" })
        return
      }
      case "advance":
        return yield* TestClock.adjust(`${step.minutes} minutes`)
      case "sweep":
        yield* Effect.flatMap(InvoiceExpiry, (expiry) => expiry.expire())
        return
      case "void":
        return yield* refusedTransition(invoices.void(real.merchantId, real.invoiceId))
      case "record":
        return yield* refusedTransition(invoices.recordPayment(real.merchantId, real.invoiceId, "recorded"))
      case "close":
        return yield* refusedTransition(invoices.closeException(real.merchantId, real.invoiceId, step.action, "closed"))
    }
  })

class StepCommand implements fc.AsyncCommand<Model, Real> {
  readonly step: Step
  constructor(step: Step) {
    this.step = step
  }
  check = () => true
  async run(model: Model, real: Real) {
    expectAfter(model, this.step, real)
    await real.run(apply(this.step, real))
    const { invoice, payments } = await real.run(Effect.flatMap(Invoices, (invoices) => invoices.get(real.merchantId, real.invoiceId)))
    const sums = modelSums(model)
    expect({
      status: invoice.status,
      exception: exceptionOf(invoice),
      received: invoice.receivedMicros,
      confirmed: invoice.confirmedMicros,
      // a replayed or re-confirmed output never adds a payment
      payments: payments.length
    }).toEqual({ status: model.status, exception: model.exception, received: sums.total, confirmed: sums.confirmed, payments: model.payments.length })
  }
  toString = () => JSON.stringify(this.step)
}

it.layer(ModelServices, { timeout: "120 seconds", excludeTestServices: true })("invoice lifecycle on the real services", (it) => {
  it.effect("agrees with the reference model after every command (fc.asyncModelRun)", () =>
    Effect.gen(function*() {
      const merchant = yield* SuiteAccount
      const services = yield* Effect.context<Services>()
      const clocks = yield* Scope.make()
      yield* Effect.addFinalizer(() => Scope.close(clocks, Exit.void))

      /** A new invoice created at START on a clock of its own. */
      const setup = async (): Promise<{ model: Model; real: Real }> => {
        const clock = await Effect.runPromise(Layer.buildWithScope(TestClock.layer(), clocks))
        const context = Context.merge(services, clock)
        const run = <A, E>(effect: Effect.Effect<A, E, Services>) => Effect.runPromise(Effect.provide(effect, context))
        await run(TestClock.setTime(START))
        const created = await run(Effect.flatMap(Invoices, (invoices) => invoices.create({ merchantId: merchant.merchantId, billingStatus: "active" }, { amountUsd: 100 })))
        expect(created.invoice.timing.payableUntilAt.getTime()).toBe(DEADLINE)
        expect(created.options).toHaveLength(1)
        const [option] = created.options
        return {
          model: newModel(START, DEADLINE),
          real: { run, merchantId: merchant.merchantId, invoiceId: created.invoice.id, optionId: option.id, required: option.requiredConfirmations, observations: [] }
        }
      }

      yield* Effect.promise(() =>
        fc.assert(
          fc.asyncProperty(fc.commands([stepArb, stepArb, stepArb, lateArb].map((arbitrary) => arbitrary.map((step) => new StepCommand(step))), { maxCommands: 30, size: "max" }),
            (commands) => fc.asyncModelRun(setup, commands)),
          { numRuns: 40 }
        )
      )
    }), 90_000)
})
