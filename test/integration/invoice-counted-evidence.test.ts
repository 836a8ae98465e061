import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { type ObservedPayment, PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"

/** `lastTransactionHash` and `confirmations` speak only of the payments that count toward the invoice. */

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const pay = (payment: Partial<ObservedPayment> & { paymentOptionId: string; amountAtomic: bigint }) =>
  Effect.flatMap(PaymentEvidence, (evidence) => evidence.record({ transactionHash: txHash(), outputIndex: 0, confirmations: 0, observedAt: new Date(), ...payment }))

const invalidate = (transactionHash: string) =>
  Effect.flatMap(PaymentEvidence, (evidence) => evidence.invalidate({ network: "ethereum", transactionHash, outputIndex: 0, reason: "reorg" }))

const api = (path: string, init?: { body?: unknown }) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.api(path, init))
const detail = (id: string) => Effect.map(api(`/api/checkout/invoices/${id}`), (answer) => answer.body)

const newInvoice = Effect.gen(function*() {
  const { body } = yield* api("/api/checkout/invoices", { body: { amountUsd: 10 } })
  return { id: body.id as string, optionId: body.paymentOptions.find((candidate: OptionJson) => candidate.network === "ethereum").id as string }
})

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("lastTransactionHash", () => {
    it.effect("is the last valid payment's hash, or null when every payment was invalidated", () =>
      Effect.gen(function*() {
        const { id, optionId } = yield* newInvoice
        const first = txHash()
        const second = txHash()
        yield* pay({ paymentOptionId: optionId, amountAtomic: 3_000_000n, transactionHash: first })
        yield* pay({ paymentOptionId: optionId, amountAtomic: 3_000_000n, transactionHash: second })
        expect((yield* detail(id)).lastTransactionHash).toBe(second)
        yield* invalidate(second)
        expect((yield* detail(id)).lastTransactionHash).toBe(first)
        yield* invalidate(first)
        expect(yield* detail(id)).toMatchObject({ status: "awaiting_payment", receivedAmountUsd: 0, lastTransactionHash: null })
      }))
  })

  describe("confirmations", () => {
    it.effect("of a confirmed invoice is not lowered by a later unconfirmed overpayment", () =>
      Effect.gen(function*() {
        const { id, optionId } = yield* newInvoice
        yield* pay({ paymentOptionId: optionId, amountAtomic: 6_000_000n, confirmations: 15 })
        yield* pay({ paymentOptionId: optionId, amountAtomic: 4_000_000n, confirmations: 12 })
        expect(yield* detail(id)).toMatchObject({ status: "confirmed", confirmations: 12 })
        yield* pay({ paymentOptionId: optionId, amountAtomic: 2_000_000n, confirmations: 0 })
        expect(yield* detail(id)).toMatchObject({ status: "confirmed", paymentCoverage: "overpayment", confirmations: 12 })
        const status = yield* api(`/api/checkout/invoices/${id}/status`)
        expect(status.body.confirmations).toBe(12)
      }))

    it.effect("while the amount is not covered, is the smallest count among the payments", () =>
      Effect.gen(function*() {
        const { id, optionId } = yield* newInvoice
        yield* pay({ paymentOptionId: optionId, amountAtomic: 6_000_000n, confirmations: 15 })
        yield* pay({ paymentOptionId: optionId, amountAtomic: 2_000_000n, confirmations: 1 })
        expect(yield* detail(id)).toMatchObject({ status: "partially_paid", confirmations: 1 })
        // the amount is covered only with the payment of 0 confirmations: that is what gates confirmation
        yield* pay({ paymentOptionId: optionId, amountAtomic: 3_000_000n, confirmations: 0 })
        expect(yield* detail(id)).toMatchObject({ status: "payment_detected", confirmations: 0 })
      }))
  })
})
