import { describe, expect, it } from "@effect/vitest"
import { Effect, Exit, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { InvoiceExpiry } from "../../src/expiry/InvoiceExpiry.ts"
import { type ObservedPayment, PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"
import type { OptionJson, PaymentJson } from "../support/Answers.ts"

const newInvoice = (amountUsd = 20) =>
  Effect.gen(function*() {
    const merchant = yield* SuiteMerchant
    const { body } = yield* merchant.api("/api/checkout/invoices", { body: { amountUsd } })
    const option = (network: string) => body.paymentOptions.find((candidate: OptionJson) => candidate.network === network)
    return { invoice: body, usdcEthereum: option("ethereum"), usdtArbitrum: option("arbitrum"), bitcoin: option("bitcoin") }
  })

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const pay = (payment: Partial<ObservedPayment> & { paymentOptionId: string; amountAtomic: bigint }) =>
  Effect.flatMap(PaymentEvidence, (evidence) => evidence.record({ transactionHash: txHash(), outputIndex: 0, confirmations: 0, observedAt: new Date(), ...payment }))

const invalidate = (network: string, transactionHash: string) =>
  Effect.flatMap(PaymentEvidence, (evidence) => evidence.invalidate({ network, transactionHash, outputIndex: 0, reason: "reorg" }))

const outbox = (invoiceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event: string }>`SELECT event FROM outbox WHERE invoice_id = ${invoiceId} ORDER BY id`.pipe(Effect.map((rows) => rows.map((row) => row.event))))

const moveDeadlineToPast = (invoiceId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) => sql`UPDATE invoices SET payable_until_at = now() - interval '1 minute' WHERE id = ${invoiceId}`)

const sweep = () => Effect.flatMap(InvoiceExpiry, (expiry) => expiry.expire())

const api = (path: string, init?: { body?: unknown }) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.api(path, init))
const dashboard = (path: string, init?: { body?: unknown }) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.dashboard(path, init))

const detail = (id: string) => Effect.map(api(`/api/checkout/invoices/${id}`), (answer) => answer.body)

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("evidence ingestion", () => {
    it.effect("refuses a transaction output already matched to another invoice's option, and changes nothing there", () =>
      Effect.gen(function*() {
        const first = yield* newInvoice(20)
        const second = yield* newInvoice(20)
        const hash = txHash()
        yield* pay({ paymentOptionId: first.usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 })
        const refused = yield* Effect.flip(pay({ paymentOptionId: second.usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 }))
        expect(refused.reason).toMatch(/already matched to another payment option/)
        const untouched = yield* detail(second.invoice.id)
        expect(untouched).toMatchObject({ status: "awaiting_payment", receivedAmountUsd: 0, payments: [] })
        expect(yield* outbox(second.invoice.id)).toEqual(["invoice_created"])
        expect((yield* detail(first.invoice.id)).status).toBe("payment_detected")
      }))

    it.effect("detects, confirms, and counts the same evidence once", () =>
      Effect.gen(function*() {
        const { invoice, usdcEthereum } = yield* newInvoice(20)
        const hash = txHash()
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 })
        let current = yield* detail(invoice.id)
        expect(current).toMatchObject({
          status: "payment_detected",
          paymentCoverage: "exact_payment",
          receivedAmountUsd: 20,
          confirmedAmountUsd: 0,
          confirmations: 1,
          lastTransactionHash: hash,
          lastPaymentOptionId: usdcEthereum.id
        })
        expect(current.paymentDetectedAt).not.toBeNull()
        expect(current.payments).toHaveLength(1)
        expect(current.payments[0]).toMatchObject({
          paymentOptionId: usdcEthereum.id,
          assetCode: "USDC",
          network: "ethereum",
          transactionHash: hash,
          amountReceived: 20,
          observedTotalAmount: 20,
          confirmations: 1,
          confirmedAt: null,
          invalidatedAt: null
        })
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 })
        expect((yield* detail(invoice.id)).payments).toHaveLength(1)
        expect(yield* outbox(invoice.id)).toEqual(["invoice_created", "invoice_payment_detected"])

        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
        current = yield* detail(invoice.id)
        expect(current).toMatchObject({ status: "confirmed", confirmedAmountUsd: 20, confirmations: 12 })
        expect(current.confirmedAt).not.toBeNull()
        expect(yield* outbox(invoice.id)).toEqual(["invoice_created", "invoice_payment_detected", "invoice_confirmed"])

        yield* invalidate("ethereum", hash)
        current = yield* detail(invoice.id)
        expect(current.status).toBe("confirmed")
        expect(current.payments[0].invalidatedAt).not.toBeNull()
        expect(current.payments[0].invalidationReason).toBe("reorg")
      }))

    it.effect("a reorganisation after confirmed keeps the status and opens a partial_payment exception the merchant can close", () =>
      Effect.gen(function*() {
        const { invoice, usdcEthereum } = yield* newInvoice(20)
        const hash = txHash()
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
        expect((yield* detail(invoice.id)).status).toBe("confirmed")
        yield* invalidate("ethereum", hash)
        expect(yield* detail(invoice.id)).toMatchObject({
          status: "confirmed",
          paymentCoverage: "no_payment",
          exceptionType: "partial_payment",
          exceptionStatus: "open"
        })
        expect(yield* outbox(invoice.id)).toEqual(["invoice_created", "invoice_confirmed", "invoice_exception_opened"])

        // the transaction mined again does not reopen or move anything; the exception waits for the merchant
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
        expect(yield* detail(invoice.id)).toMatchObject({ status: "confirmed", exceptionType: "partial_payment", exceptionStatus: "open" })
        const close = `/api/dashboard/invoices/${invoice.id}/exception/close`
        expect((yield* dashboard(close, { body: { action: "accept_late_payment", note: "no" } })).status).toBe(409)
        expect(yield* dashboard(close, { body: { action: "close_unpaid", note: "   " } })).toMatchObject({ status: 400, body: { error: "note must not be empty" } })
        expect((yield* api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "no" } })).status).toBe(409)
        const closed = yield* dashboard(close, { body: { action: "close_unpaid", note: "Re-mined; checked on chain" } })
        expect(closed.status).toBe(200)
        expect(closed.body).toMatchObject({
          status: "confirmed",
          exceptionType: "partial_payment",
          exceptionStatus: "closed",
          exceptionAction: "close_unpaid",
          exceptionNote: "Re-mined; checked on chain"
        })
        expect(closed.body.exceptionClosedAt).not.toBeNull()
        expect(yield* outbox(invoice.id)).toEqual([
          "invoice_created",
          "invoice_confirmed",
          "invoice_exception_opened",
          "invoice_exception_closed"
        ])
      }))

    it.effect("mark_paid_out_of_band closes the reorg exception of a confirmed invoice, which stays confirmed", () =>
      Effect.gen(function*() {
        const { invoice, usdcEthereum } = yield* newInvoice(20)
        const hash = txHash()
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
        yield* invalidate("ethereum", hash)
        const closed = yield* dashboard(`/api/dashboard/invoices/${invoice.id}/exception/close`, {
          body: { action: "mark_paid_out_of_band", note: "Customer paid by bank transfer" }
        })
        expect(closed.body).toMatchObject({
          status: "confirmed",
          exceptionStatus: "closed",
          exceptionAction: "mark_paid_out_of_band",
          exceptionNote: "Customer paid by bank transfer"
        })
        expect(yield* outbox(invoice.id)).toEqual([
          "invoice_created",
          "invoice_confirmed",
          "invoice_exception_opened",
          "invoice_exception_closed"
        ])
      }))

    it.effect("adds partial payments across options, handles overpayment and reorgs back", () =>
      Effect.gen(function*() {
        const { invoice, usdcEthereum, usdtArbitrum } = yield* newInvoice(30)
        const first = txHash()
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 10_000_000n, transactionHash: first })
        expect(yield* detail(invoice.id)).toMatchObject({
          status: "partially_paid",
          paymentCoverage: "partial_payment",
          paymentSummary: { remainingAmountUsd: 20, overpaymentAmountUsd: 0 }
        })
        yield* pay({ paymentOptionId: usdtArbitrum.id, amountAtomic: 25_000_000n })
        expect(yield* detail(invoice.id)).toMatchObject({
          status: "payment_detected",
          paymentCoverage: "overpayment",
          receivedAmountUsd: 35,
          paymentSummary: { remainingAmountUsd: 0, overpaymentAmountUsd: 5 },
          lastPaymentOptionId: usdtArbitrum.id,
          exceptionType: null
        })
        yield* invalidate("ethereum", first)
        expect(yield* detail(invoice.id)).toMatchObject({ receivedAmountUsd: 25, paymentCoverage: "partial_payment" })
        expect((yield* detail(invoice.id)).status).toBe("partially_paid")
        expect(yield* outbox(invoice.id)).toEqual([
          "invoice_created",
          "invoice_partially_paid",
          "invoice_payment_detected",
          "invoice_partially_paid"
        ])
      }))

    it.effect("rejects evidence for an unknown option and a non-positive amount", () =>
      Effect.gen(function*() {
        const { usdcEthereum } = yield* newInvoice(5)
        expect(yield* Effect.flip(pay({ paymentOptionId: crypto.randomUUID(), amountAtomic: 1n }))).toMatchObject({ _tag: "EvidenceRejected", reason: "unknown payment option" })
        expect(yield* Effect.flip(pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 0n }))).toMatchObject({ _tag: "EvidenceRejected", reason: "amount must be positive" })
      }))
  })

  describe("deadlines and late payments", () => {
    it.effect("expires unpaid invoices, and a partial one with a partial_payment exception", () =>
      Effect.gen(function*() {
        const unpaid = yield* newInvoice(10)
        const partial = yield* newInvoice(10)
        yield* pay({ paymentOptionId: partial.usdcEthereum.id, amountAtomic: 4_000_000n })
        yield* moveDeadlineToPast(unpaid.invoice.id)
        yield* moveDeadlineToPast(partial.invoice.id)
        expect(yield* sweep()).toBeGreaterThanOrEqual(2)
        expect(yield* detail(unpaid.invoice.id)).toMatchObject({ status: "expired", exceptionType: null })
        expect(yield* detail(partial.invoice.id)).toMatchObject({
          status: "expired",
          exceptionType: "partial_payment",
          exceptionStatus: "open"
        })
        expect(yield* outbox(partial.invoice.id)).toEqual([
          "invoice_created",
          "invoice_partially_paid",
          "invoice_expired",
          "invoice_exception_opened"
        ])
        expect(yield* sweep()).toBe(0)
      }))

    it.effect("opens late_payment for a late full payment and never confirms it by itself", () =>
      Effect.gen(function*() {
        const { invoice, usdcEthereum } = yield* newInvoice(10)
        yield* moveDeadlineToPast(invoice.id)
        const hash = txHash()
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 10_000_000n, transactionHash: hash, confirmations: 50 })
        const current = yield* detail(invoice.id)
        expect(current).toMatchObject({ status: "expired", exceptionType: "late_payment", exceptionStatus: "open", confirmedAt: null })
        expect(yield* outbox(invoice.id)).toEqual(["invoice_created", "invoice_expired", "invoice_exception_opened"])

        const recorded = yield* api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "accepted late" } })
        expect(recorded.body).toMatchObject({
          status: "paid_out_of_band",
          exceptionStatus: "closed",
          exceptionAction: "mark_paid_out_of_band",
          exceptionNote: "accepted late",
          paidOutOfBandNote: "accepted late"
        })
        expect(recorded.body.exceptionClosedAt).not.toBeNull()
        expect(yield* outbox(invoice.id)).toEqual([
          "invoice_created",
          "invoice_expired",
          "invoice_exception_opened",
          "invoice_payment_recorded",
          "invoice_exception_closed"
        ])
      }))

    it.effect("closing an exception emits invoice_exception_closed, with the status event where the status moves", () =>
      Effect.gen(function*() {
        const unpaid = yield* newInvoice(10)
        yield* pay({ paymentOptionId: unpaid.usdcEthereum.id, amountAtomic: 4_000_000n })
        yield* moveDeadlineToPast(unpaid.invoice.id)
        yield* sweep()
        const closeUnpaid = yield* dashboard(`/api/dashboard/invoices/${unpaid.invoice.id}/exception/close`, {
          body: { action: "close_unpaid", note: "Refunded" }
        })
        expect(closeUnpaid.body).toMatchObject({ status: "expired", exceptionStatus: "closed", exceptionAction: "close_unpaid" })
        expect(yield* outbox(unpaid.invoice.id)).toEqual([
          "invoice_created",
          "invoice_partially_paid",
          "invoice_expired",
          "invoice_exception_opened",
          "invoice_exception_closed"
        ])

        const accepted = yield* newInvoice(10)
        yield* moveDeadlineToPast(accepted.invoice.id)
        yield* pay({ paymentOptionId: accepted.usdcEthereum.id, amountAtomic: 10_000_000n, confirmations: 12 })
        const accept = yield* dashboard(`/api/dashboard/invoices/${accepted.invoice.id}/exception/close`, {
          body: { action: "accept_late_payment", note: "Shipping" }
        })
        expect(accept.body).toMatchObject({ status: "confirmed", exceptionAction: "accept_late_payment", confirmedAmountUsd: 10 })
        expect(yield* outbox(accepted.invoice.id)).toEqual([
          "invoice_created",
          "invoice_expired",
          "invoice_exception_opened",
          "invoice_confirmed",
          "invoice_exception_closed"
        ])
      }))

    it.effect("treats any payment on a voided invoice as late", () =>
      Effect.gen(function*() {
        const { invoice, usdcEthereum } = yield* newInvoice(10)
        yield* api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 3_000_000n })
        expect(yield* detail(invoice.id)).toMatchObject({ status: "voided", exceptionType: "partial_payment", exceptionStatus: "open" })
        yield* pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 7_000_000n, confirmations: 99 })
        expect(yield* detail(invoice.id)).toMatchObject({ status: "voided", exceptionType: "late_payment", confirmedAt: null })
      }))
  })

  describe("concurrency", () => {
    it.effect("serialises simultaneous evidence and void on one invoice without losing an update", () =>
      Effect.gen(function*() {
        const { invoice, usdcEthereum } = yield* newInvoice(100)
        const amounts = Array.from({ length: 12 }, (_, index) => BigInt(index + 1) * 1_000_000n)
        const results = yield* Effect.all([
          ...amounts.map((amountAtomic) => Effect.exit(pay({ paymentOptionId: usdcEthereum.id, amountAtomic }))),
          Effect.exit(api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} }))
        ], { concurrency: "unbounded" })
        expect(results.every((result: Exit.Exit<unknown, unknown>) => Exit.isSuccess(result))).toBe(true)
        const current = yield* detail(invoice.id)
        const total = current.payments.reduce((sum: number, payment: PaymentJson) => sum + payment.amountReceived, 0)
        expect(current.payments).toHaveLength(12)
        expect(current.receivedAmountUsd).toBe(total)
        expect(total).toBe(78)
        expect(["voided", "partially_paid"]).toContain(current.status)
        if (current.status === "voided") expect(current.exceptionStatus).toBe("open")
      }))

    it.effect("serialises simultaneous evidence and record-payment: the recorded status holds and every payment counts", () =>
      Effect.gen(function*() {
        const { invoice, usdtArbitrum } = yield* newInvoice(50)
        const [payments, recorded] = yield* Effect.all([
          Effect.all(Array.from({ length: 8 }, () => Effect.exit(pay({ paymentOptionId: usdtArbitrum.id, amountAtomic: 5_000_000n }))), { concurrency: "unbounded" }),
          api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "wire" } })
        ], { concurrency: "unbounded" })
        expect(payments.every(Exit.isSuccess)).toBe(true)
        const current = yield* detail(invoice.id)
        expect(current.receivedAmountUsd).toBe(40)
        expect(current.payments).toHaveLength(8)
        if (recorded.status === 200) expect(current.status).toBe("paid_out_of_band")
        else expect(recorded.status).toBe(409)
        const events = yield* outbox(invoice.id)
        expect(events.filter((event) => event === "invoice_payment_recorded").length).toBe(recorded.status === 200 ? 1 : 0)
      }))
  })
})
