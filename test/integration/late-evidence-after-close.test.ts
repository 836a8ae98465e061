import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import { type ObservedPayment, PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"

/** The spec's row "expired or voided + late payment opens an exception" holds after a closed exception too, and so does a loss on a confirmed invoice (D23). */

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const pay = (payment: Partial<ObservedPayment> & { paymentOptionId: string; amountAtomic: bigint }) =>
  Effect.flatMap(PaymentEvidence, (evidence) => evidence.record({ transactionHash: txHash(), outputIndex: 0, confirmations: 0, observedAt: new Date(), ...payment }))

/** As the simulator invalidates: without a reorg point, judged at once. */
const invalidate = (transactionHash: string) =>
  Effect.flatMap(PaymentEvidence, (evidence) => evidence.invalidate({ network: "ethereum", transactionHash, outputIndex: 0, reason: "chain_reorganization" }))

const outbox = (invoiceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event: string }>`SELECT event FROM outbox WHERE invoice_id = ${invoiceId} ORDER BY id`.pipe(Effect.map((rows) => rows.map((row) => row.event))))

const api = (path: string, init?: { body?: unknown }) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.api(path, init))
const close = (id: string, action: string, note: string) =>
  Effect.flatMap(SuiteMerchant, (merchant) => merchant.dashboard(`/api/dashboard/invoices/${id}/exception/close`, { body: { action, note } }))
const detail = (id: string) => Effect.map(api(`/api/checkout/invoices/${id}`), (answer) => answer.body)

/** An expired invoice of 10 USD (deadline moved to the past, then swept) and its USDC-on-ethereum option. */
const expiredInvoice = Effect.gen(function*() {
  const { body } = yield* api("/api/checkout/invoices", { body: { amountUsd: 10 } })
  const option = body.paymentOptions.find((candidate: OptionJson) => candidate.network === "ethereum")
  const sql = yield* SqlClient.SqlClient
  yield* sql`UPDATE invoices SET payable_until_at = now() - interval '1 minute' WHERE id = ${body.id}`
  yield* Effect.flatMap(InvoiceExpiry, (expiry) => expiry.expire())
  return { id: body.id as string, optionId: option.id as string }
})

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("late evidence after a closed exception", () => {
    it.effect("a late full payment after close_unpaid opens late_payment with fresh fields, and can be closed again", () =>
      Effect.gen(function*() {
        const { id, optionId } = yield* expiredInvoice
        yield* pay({ paymentOptionId: optionId, amountAtomic: 4_000_000n, confirmations: 12 })
        expect(yield* detail(id)).toMatchObject({ status: "expired", exceptionType: "partial_payment", exceptionStatus: "open" })
        const closed = yield* close(id, "close_unpaid", "Refunded the 4 USD")
        expect(closed.body).toMatchObject({ exceptionStatus: "closed", exceptionAction: "close_unpaid", exceptionNote: "Refunded the 4 USD" })

        const late = txHash()
        yield* pay({ paymentOptionId: optionId, amountAtomic: 10_000_000n, transactionHash: late, confirmations: 1 })
        expect(yield* detail(id)).toMatchObject({
          status: "expired",
          exceptionType: "late_payment",
          exceptionStatus: "open",
          exceptionAction: null,
          exceptionNote: null,
          exceptionClosedAt: null,
          confirmedAt: null
        })
        expect(yield* outbox(id)).toEqual([
          "invoice_created",
          "invoice_expired",
          "invoice_exception_opened",
          "invoice_exception_closed",
          "invoice_exception_opened"
        ])

        // accept_late_payment still waits for the late payment's confirmations
        const early = yield* close(id, "accept_late_payment", "Shipping")
        expect(early.status).toBe(409)
        yield* pay({ paymentOptionId: optionId, amountAtomic: 10_000_000n, transactionHash: late, confirmations: 12 })
        // a confirmation of the reviewed payment is not a new payment: nothing opens or closes
        expect(yield* outbox(id)).toHaveLength(5)
        const accepted = yield* close(id, "accept_late_payment", "Shipping")
        expect(accepted.body).toMatchObject({
          status: "confirmed",
          exceptionType: "late_payment",
          exceptionStatus: "closed",
          exceptionAction: "accept_late_payment",
          exceptionNote: "Shipping"
        })
        expect(accepted.body.exceptionClosedAt).not.toBeNull()
        expect(yield* outbox(id)).toEqual([
          "invoice_created",
          "invoice_expired",
          "invoice_exception_opened",
          "invoice_exception_closed",
          "invoice_exception_opened",
          "invoice_confirmed",
          "invoice_exception_closed"
        ])
      }))

    it.effect("a late payment after a close opens the exception its total calls for; a confirmation of a reviewed payment opens nothing", () =>
      Effect.gen(function*() {
        const { id, optionId } = yield* expiredInvoice
        const first = txHash()
        yield* pay({ paymentOptionId: optionId, amountAtomic: 6_000_000n, transactionHash: first })
        yield* close(id, "close_unpaid", "Asked the payer to complete")
        // the reviewed payment gains confirmations: no new exception
        yield* pay({ paymentOptionId: optionId, amountAtomic: 6_000_000n, transactionHash: first, confirmations: 12 })
        expect(yield* detail(id)).toMatchObject({ exceptionType: "partial_payment", exceptionStatus: "closed", exceptionAction: "close_unpaid" })

        yield* pay({ paymentOptionId: optionId, amountAtomic: 1_000_000n })
        expect(yield* detail(id)).toMatchObject({ exceptionType: "partial_payment", exceptionStatus: "open", exceptionAction: null, exceptionNote: null })
        yield* close(id, "close_unpaid", "Still short")
        yield* pay({ paymentOptionId: optionId, amountAtomic: 3_000_000n })
        expect(yield* detail(id)).toMatchObject({ exceptionType: "late_payment", exceptionStatus: "open", exceptionClosedAt: null })
        expect((yield* outbox(id)).filter((event) => event.startsWith("invoice_exception"))).toEqual([
          "invoice_exception_opened",
          "invoice_exception_closed",
          "invoice_exception_opened",
          "invoice_exception_closed",
          "invoice_exception_opened"
        ])
      }))

    it.effect("on a voided invoice too", () =>
      Effect.gen(function*() {
        const { body } = yield* api("/api/checkout/invoices", { body: { amountUsd: 10 } })
        const optionId = body.paymentOptions.find((candidate: OptionJson) => candidate.network === "ethereum").id
        yield* api(`/api/checkout/invoices/${body.id}/void`, { body: {} })
        yield* pay({ paymentOptionId: optionId, amountAtomic: 2_000_000n })
        yield* close(body.id, "close_unpaid", "Refunded")
        yield* pay({ paymentOptionId: optionId, amountAtomic: 10_000_000n })
        expect(yield* detail(body.id)).toMatchObject({ status: "voided", exceptionType: "late_payment", exceptionStatus: "open", exceptionAction: null })
      }))
  })

  describe("a second loss on a confirmed invoice after its exception was closed (#52 item 5)", () => {
    for (const action of ["close_unpaid", "mark_paid_out_of_band"] as const) {
      it.effect(`opens a new partial_payment exception with its webhook, after ${action}`, () =>
        Effect.gen(function*() {
          const { body } = yield* api("/api/checkout/invoices", { body: { amountUsd: 10 } })
          const optionId = body.paymentOptions.find((candidate: OptionJson) => candidate.network === "ethereum").id
          const [first, second] = [txHash(), txHash()]
          yield* pay({ paymentOptionId: optionId, amountAtomic: 6_000_000n, transactionHash: first, confirmations: 12 })
          yield* pay({ paymentOptionId: optionId, amountAtomic: 6_000_000n, transactionHash: second, confirmations: 12 })
          expect(yield* detail(body.id)).toMatchObject({ status: "confirmed", exceptionStatus: null })
          yield* invalidate(first)
          expect(yield* detail(body.id)).toMatchObject({ status: "confirmed", exceptionType: "partial_payment", exceptionStatus: "open" })
          yield* close(body.id, action, "The customer paid by bank transfer")

          yield* invalidate(second)
          expect(yield* detail(body.id)).toMatchObject({
            status: "confirmed",
            receivedAmountUsd: 0,
            exceptionType: "partial_payment",
            exceptionStatus: "open",
            exceptionAction: null,
            exceptionNote: null,
            exceptionClosedAt: null
          })
          expect((yield* outbox(body.id)).filter((event) => event.startsWith("invoice_exception"))).toEqual([
            "invoice_exception_opened",
            "invoice_exception_closed",
            "invoice_exception_opened"
          ])
        }))
    }
  })
})
