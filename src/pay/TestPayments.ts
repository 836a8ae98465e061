import { Clock, Context, Data, Effect, Layer } from "effect"
import { InvoiceNotFound } from "../domain/Errors.ts"
import { remainingAtomic } from "../domain/Evidence.ts"
import type { InvoiceParts, PaymentOptionRecord } from "../domain/Invoice.ts"
import { notPayableReason } from "../domain/Payable.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { type EvidenceResult, PaymentEvidence } from "../invoices/PaymentEvidence.ts"

/** The payer page cannot simulate this payment now (409): the invoice is not payable, or nothing remains through the option. */
export class TestPaymentRefused extends Data.TaggedError("TestPaymentRefused")<{ readonly message: string }> {}
/** The invoice has no payment option of that id (400). */
export class TestPaymentOptionUnknown extends Data.TaggedError("TestPaymentOptionUnknown")<{}> {}

export type SimulatedPaymentKind = "full" | "partial"

export interface SimulatedPayment {
  readonly paymentOptionId: string
  readonly amountAtomic: bigint
  readonly confirmations: number
  readonly observedAt: Date
}

const simulatedHash = () => `sim_${crypto.randomUUID().replaceAll("-", "")}`

/**
 * THE one place a simulated payment of a test invoice enters the service: through the same entry
 * point as the chain watchers and the development simulator (`PaymentEvidence.record`). When the
 * test helpers' service (`POST /api/checkout/test-helpers/invoices/:id/pay`) exists, this is the
 * function to point at it, so that the page and the helpers pay test invoices one way.
 */
export const feedSimulatedPayment = (evidence: PaymentEvidence["Service"], payment: SimulatedPayment): Effect.Effect<EvidenceResult, TestPaymentRefused> =>
  evidence.record({ ...payment, transactionHash: simulatedHash(), outputIndex: 0 }).pipe(
    Effect.mapError((rejected) => new TestPaymentRefused({ message: `The simulated payment was refused: ${rejected.reason}` }))
  )

/** The option the payer chose, else the one already paid into, else the default. */
const chosenOption = (parts: InvoiceParts, paymentOptionId: string | undefined): PaymentOptionRecord | undefined => {
  if (paymentOptionId !== undefined) return parts.options.find((option) => option.id === paymentOptionId)
  const paid = parts.options.find((option) => option.id === parts.invoice.lastPaymentOptionId)
  return paid ?? parts.options.find((option) => option.isDefault) ?? parts.options[0]
}

/** What a simulated payment sends through `option`: what remains there, or half of it (at least one unit) for a partial one. */
export const simulatedAmount = (remaining: bigint, kind: SimulatedPaymentKind): bigint => kind === "full" || remaining < 2n ? remaining : remaining / 2n

/**
 * Test invoices (issue #55) on the payer page: the page's "Simulate payment", full or partial, which pays the chosen option with the
 * network's required confirmations, as a merchant's end-to-end test in a browser needs. A live
 * invoice is not found here: the public endpoint exists only for test invoices.
 */
export class TestPayments extends Context.Service<TestPayments, {
  readonly simulate: (
    invoiceId: string,
    request: { readonly kind: SimulatedPaymentKind; readonly paymentOptionId?: string | undefined }
  ) => Effect.Effect<void, InvoiceNotFound | TestPaymentRefused | TestPaymentOptionUnknown>
}>()("Pay/TestPayments") {
  static readonly layerWithoutDependencies = Layer.effect(
    TestPayments,
    Effect.gen(function*() {
      const invoices = yield* Invoices
      const evidence = yield* PaymentEvidence

      const simulate = Effect.fn("TestPayments.simulate")(function*(
        invoiceId: string,
        request: { readonly kind: SimulatedPaymentKind; readonly paymentOptionId?: string | undefined }
      ) {
        const parts = yield* invoices.getPublic(invoiceId)
        if (parts.invoice.livemode) return yield* new InvoiceNotFound({ invoiceId })
        const now = new Date(yield* Clock.currentTimeMillis)
        const notPayable = notPayableReason(parts.invoice, now)
        if (notPayable !== undefined) {
          return yield* new TestPaymentRefused({
            message: notPayable._tag === "Status"
              ? `This invoice cannot be paid: it is ${notPayable.status}`
              : `This invoice cannot be paid: its payment window ended at ${notPayable.payableUntilAt.toISOString()}`
          })
        }
        const option = chosenOption(parts, request.paymentOptionId)
        if (option === undefined) return yield* new TestPaymentOptionUnknown()
        const remaining = remainingAtomic(parts.invoice.amountMicros, option, parts.payments ?? [])
        if (remaining === 0n) return yield* new TestPaymentRefused({ message: "Nothing remains to pay through this payment option" })
        yield* feedSimulatedPayment(evidence, {
          paymentOptionId: option.id,
          amountAtomic: simulatedAmount(remaining, request.kind),
          confirmations: option.requiredConfirmations,
          observedAt: now
        })
      })
      return { simulate }
    })
  )
  static readonly layer = TestPayments.layerWithoutDependencies.pipe(Layer.provide([PaymentEvidence.layer, Invoices.layer]))
}
