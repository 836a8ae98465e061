import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { anotherApp, SuiteMerchant, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"
import type { JsonBody } from "../support/Json.ts"

const newInvoice = (amountUsd = 10) =>
  Effect.flatMap(SuiteMerchant, (merchant) => Effect.map(merchant.api("/api/checkout/invoices", { body: { amountUsd } }), (answer) => answer.body))
const optionOf = (invoice: JsonBody, network: string) => invoice.paymentOptions.find((option: OptionJson) => option.network === network)

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("development simulator", () => {
    it.effect("walks an invoice through detection, confirmation and a reorg", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const invoice = yield* newInvoice(10)
        const option = optionOf(invoice, "base")
        const paid = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
          body: { paymentOptionId: option.id, amount: "10", confirmations: 1, transactionHash: "0xabc" }
        })
        expect(paid.status).toBe(200)
        expect(paid.body.payment).toMatchObject({ transactionHash: "0xabc", amountReceived: 10, confirmations: 1 })
        expect(paid.body.invoice).toMatchObject({ status: "payment_detected", paymentCoverage: "exact_payment" })

        const confirmed = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-confirmations`, {
          body: { transactionHash: "0xabc", confirmations: 20 }
        })
        expect(confirmed.body.invoice).toMatchObject({ status: "confirmed", confirmations: 20, confirmedAmountUsd: 10 })

        const invalidated = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-invalidation`, {
          body: { transactionHash: "0xabc", reason: "reorg" }
        })
        expect(invalidated.body.invoice).toMatchObject({ status: "confirmed", exceptionType: "partial_payment", exceptionStatus: "open" })
        expect(invalidated.body.payment).toMatchObject({ invalidationReason: "reorg" })
        expect(invalidated.body.invoice.receivedAmountUsd).toBe(0)
      }))

    it.effect("validates input and answers 403 to API keys and 404 for another account", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const invoice = yield* newInvoice(10)
        const option = optionOf(invoice, "solana")
        const path = `/api/dev/invoices/${invoice.id}/simulate-payment`
        expect(yield* merchant.dashboard(path, { body: { paymentOptionId: option.id, amount: "1.0000001" } })).toMatchObject({ status: 400 })
        expect(yield* merchant.dashboard(path, { body: { paymentOptionId: option.id, amount: "ten" } })).toMatchObject({ status: 400 })
        expect(yield* merchant.dashboard(path, { body: { amount: "1" } })).toMatchObject({ status: 400, body: { error: "paymentOptionId is required" } })
        expect((yield* merchant.api(path, { body: { paymentOptionId: option.id, amount: "1" } })).status).toBe(403)
        const other = yield* Effect.flatMap(TestServer, (server) => server.createMerchant())
        expect((yield* other.dashboard(path, { body: { paymentOptionId: option.id, amount: "1" } })).status).toBe(404)
      }))

    it.effect("is absent in production", () =>
      Effect.gen(function*() {
        const production = yield* anotherApp({ env: "production" })
        const response = yield* Effect.flatMap(TestServer, (server) => server.request(`/api/dev/invoices/${crypto.randomUUID()}/simulate-expiry`, { method: "POST" })).pipe(
          Effect.provide(production)
        )
        expect(response).toMatchObject({ status: 404, body: { error: "Not found" } })
      }))
  })

  describe("exception review", () => {
    it.effect("accepts a late full payment: confirmed, with the close recorded", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const invoice = yield* newInvoice(10)
        const option = optionOf(invoice, "arbitrum")
        const expired = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-expiry`, { body: {} })
        expect(expired.body.status).toBe("expired")
        const late = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
          body: { paymentOptionId: option.id, amount: "10", confirmations: 30, late: true }
        })
        expect(late.body.invoice).toMatchObject({ status: "expired", exceptionType: "late_payment", exceptionStatus: "open" })
        const close = `/api/dashboard/invoices/${invoice.id}/exception/close`
        expect((yield* merchant.api(close, { body: { action: "accept_late_payment", note: "ok" } })).status).toBe(403)
        const closed = yield* merchant.dashboard(close, { body: { action: "accept_late_payment", note: "Customer paid late, shipping" } })
        expect(closed.status).toBe(200)
        expect(closed.body).toMatchObject({
          status: "confirmed",
          exceptionStatus: "closed",
          exceptionAction: "accept_late_payment",
          exceptionNote: "Customer paid late, shipping"
        })
        expect(closed.body.exceptionClosedAt).not.toBeNull()
        expect(closed.body.confirmedAt).not.toBeNull()
        expect((yield* merchant.dashboard(close, { body: { action: "close_unpaid", note: "again" } })).status).toBe(409)
      }))

    it.effect("refuses to accept a late payment before it has the network's required confirmations, then accepts it as confirmed funds", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const invoice = yield* newInvoice(10)
        const option = optionOf(invoice, "arbitrum")
        expect(option.optionPayload.requiredConfirmations).toBe(20)
        yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-expiry`, { body: {} })
        const late = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
          body: { paymentOptionId: option.id, amount: "10", confirmations: 3, late: true, transactionHash: "0xlate-unconfirmed" }
        })
        expect(late.body.invoice).toMatchObject({ status: "expired", exceptionType: "late_payment", exceptionStatus: "open", confirmedAmountUsd: 0 })
        const close = `/api/dashboard/invoices/${invoice.id}/exception/close`
        expect(yield* merchant.dashboard(close, { body: { action: "accept_late_payment", note: "too early" } })).toMatchObject({
          status: 409,
          body: { error: "The late payment has 3 of 20 confirmations; accept it once it is confirmed" }
        })
        expect((yield* merchant.dashboard(`/api/checkout/invoices/${invoice.id}`)).body).toMatchObject({
          status: "expired",
          exceptionStatus: "open",
          exceptionAction: null,
          confirmedAt: null
        })
        // the other closes stay available to the merchant meanwhile; here the merchant waits instead
        yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-confirmations`, {
          body: { transactionHash: "0xlate-unconfirmed", confirmations: 20 }
        })
        const accepted = yield* merchant.dashboard(close, { body: { action: "accept_late_payment", note: "confirmed now" } })
        expect(accepted.status).toBe(200)
        expect(accepted.body).toMatchObject({
          status: "confirmed",
          confirmedAmountUsd: 10,
          exceptionStatus: "closed",
          exceptionAction: "accept_late_payment"
        })
      }))

    it.effect("late payment on an immediate invoice without the flag is judged by the deadline, and partial exceptions cannot be accepted", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const invoice = yield* newInvoice(10)
        const option = optionOf(invoice, "ethereum")
        yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, { body: { paymentOptionId: option.id, amount: "4" } })
        const expired = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-expiry`, { body: {} })
        expect(expired.body).toMatchObject({ status: "expired", exceptionType: "partial_payment", exceptionStatus: "open" })
        const close = `/api/dashboard/invoices/${invoice.id}/exception/close`
        expect((yield* merchant.dashboard(close, { body: { action: "accept_late_payment", note: "no" } })).status).toBe(409)
        expect(yield* merchant.dashboard(close, { body: { action: "refund", note: "x" } })).toMatchObject({
          status: 400,
          body: { error: "action must be one of accept_late_payment, mark_paid_out_of_band, close_unpaid" }
        })
        expect(yield* merchant.dashboard(close, { body: { action: "close_unpaid" } })).toMatchObject({ status: 400, body: { error: "note is required" } })
        const closed = yield* merchant.dashboard(close, { body: { action: "close_unpaid", note: "Refunded the 4 USD" } })
        expect(closed.body).toMatchObject({ status: "expired", exceptionStatus: "closed", exceptionAction: "close_unpaid" })
      }))

    it.effect("mark_paid_out_of_band moves the invoice to paid_out_of_band with the note", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const invoice = yield* newInvoice(10)
        yield* merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
        const option = optionOf(invoice, "bitcoin")
        const late = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
          body: { paymentOptionId: option.id, amount: "0.0001" }
        })
        expect(late.body.invoice).toMatchObject({ status: "voided", exceptionType: "partial_payment" })
        const closed = yield* merchant.dashboard(`/api/dashboard/invoices/${invoice.id}/exception/close`, {
          body: { action: "mark_paid_out_of_band", note: "Settled by bank transfer" }
        })
        expect(closed.body).toMatchObject({
          status: "paid_out_of_band",
          paidOutOfBandNote: "Settled by bank transfer",
          exceptionAction: "mark_paid_out_of_band",
          exceptionStatus: "closed"
        })
        expect(closed.body.paidOutOfBandAt).not.toBeNull()
      }))
  })
})
