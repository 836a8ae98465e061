import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DeadlineSweeper } from "../../src/invoices/DeadlineSweeper.ts"
import { type ObservedPayment, PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const newInvoice = async (amountUsd = 20) => {
  const { body } = await merchant.api("/api/checkout/invoices", { body: { amountUsd } })
  const option = (network: string) => body.paymentOptions.find((candidate: any) => candidate.network === network)
  return { invoice: body, usdcEthereum: option("ethereum"), usdtArbitrum: option("arbitrum"), bitcoin: option("bitcoin") }
}

const txHash = () => `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`

const pay = (payment: Partial<ObservedPayment> & { paymentOptionId: string; amountAtomic: bigint }) =>
  app.run(Effect.flatMap(PaymentEvidence, (evidence) =>
    evidence.record({ transactionHash: txHash(), outputIndex: 0, confirmations: 0, observedAt: new Date(), ...payment })))

const invalidate = (network: string, transactionHash: string) =>
  app.run(Effect.flatMap(PaymentEvidence, (evidence) => evidence.invalidate({ network, transactionHash, outputIndex: 0, reason: "reorg" })))

const outbox = (invoiceId: string) =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ event: string }>`SELECT event FROM outbox WHERE invoice_id = ${invoiceId} ORDER BY id`.pipe(Effect.map((rows) => rows.map((row) => row.event)))))

const moveDeadlineToPast = (invoiceId: string) =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql`UPDATE invoices SET payable_until_at = now() - interval '1 minute' WHERE id = ${invoiceId}`))

const sweep = () => app.run(Effect.flatMap(DeadlineSweeper, (sweeper) => sweeper.sweep()))

const detail = async (id: string) => (await merchant.api(`/api/checkout/invoices/${id}`)).body

describe("evidence ingestion", () => {
  it("refuses a transaction output already matched to another invoice's option, and changes nothing there", async () => {
    const first = await newInvoice(20)
    const second = await newInvoice(20)
    const hash = txHash()
    await pay({ paymentOptionId: first.usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 })
    const refused = await pay({ paymentOptionId: second.usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 })
      .then(() => undefined, (error: { reason?: string }) => error.reason)
    expect(refused).toMatch(/already matched to another payment option/)
    const untouched = await detail(second.invoice.id)
    expect(untouched).toMatchObject({ status: "awaiting_payment", receivedAmountUsd: 0, payments: [] })
    expect(await outbox(second.invoice.id)).toEqual(["invoice_created"])
    expect((await detail(first.invoice.id)).status).toBe("payment_detected")
  })

  it("detects, confirms, and counts the same evidence once", async () => {
    const { invoice, usdcEthereum } = await newInvoice(20)
    const hash = txHash()
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 })
    let current = await detail(invoice.id)
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
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 1 })
    expect((await detail(invoice.id)).payments).toHaveLength(1)
    expect(await outbox(invoice.id)).toEqual(["invoice_created", "invoice_payment_detected"])

    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
    current = await detail(invoice.id)
    expect(current).toMatchObject({ status: "confirmed", confirmedAmountUsd: 20, confirmations: 12 })
    expect(current.confirmedAt).not.toBeNull()
    expect(await outbox(invoice.id)).toEqual(["invoice_created", "invoice_payment_detected", "invoice_confirmed"])

    await invalidate("ethereum", hash)
    current = await detail(invoice.id)
    expect(current.status).toBe("confirmed")
    expect(current.payments[0].invalidatedAt).not.toBeNull()
    expect(current.payments[0].invalidationReason).toBe("reorg")
  })

  it("a reorganisation after confirmed keeps the status and opens a partial_payment exception the merchant can close", async () => {
    const { invoice, usdcEthereum } = await newInvoice(20)
    const hash = txHash()
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
    expect((await detail(invoice.id)).status).toBe("confirmed")
    await invalidate("ethereum", hash)
    expect(await detail(invoice.id)).toMatchObject({
      status: "confirmed",
      paymentCoverage: "no_payment",
      exceptionType: "partial_payment",
      exceptionStatus: "open"
    })
    expect(await outbox(invoice.id)).toEqual(["invoice_created", "invoice_confirmed", "invoice_exception_opened"])

    // the transaction mined again does not reopen or move anything; the exception waits for the merchant
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
    expect(await detail(invoice.id)).toMatchObject({ status: "confirmed", exceptionType: "partial_payment", exceptionStatus: "open" })
    const close = `/api/dashboard/invoices/${invoice.id}/exception/close`
    expect((await merchant.dashboard(close, { body: { action: "accept_late_payment", note: "no" } })).status).toBe(409)
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "no" } })).status).toBe(409)
    const closed = await merchant.dashboard(close, { body: { action: "close_unpaid", note: "Re-mined; checked on chain" } })
    expect(closed.status).toBe(200)
    expect(closed.body).toMatchObject({
      status: "confirmed",
      exceptionType: "partial_payment",
      exceptionStatus: "closed",
      exceptionAction: "close_unpaid",
      exceptionNote: "Re-mined; checked on chain"
    })
    expect(closed.body.exceptionClosedAt).not.toBeNull()
    expect(await outbox(invoice.id)).toEqual([
      "invoice_created",
      "invoice_confirmed",
      "invoice_exception_opened",
      "invoice_exception_closed"
    ])
  })

  it("mark_paid_out_of_band closes the reorg exception of a confirmed invoice, which stays confirmed", async () => {
    const { invoice, usdcEthereum } = await newInvoice(20)
    const hash = txHash()
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 20_000_000n, transactionHash: hash, confirmations: 12 })
    await invalidate("ethereum", hash)
    const closed = await merchant.dashboard(`/api/dashboard/invoices/${invoice.id}/exception/close`, {
      body: { action: "mark_paid_out_of_band", note: "Customer paid by bank transfer" }
    })
    expect(closed.body).toMatchObject({
      status: "confirmed",
      exceptionStatus: "closed",
      exceptionAction: "mark_paid_out_of_band",
      exceptionNote: "Customer paid by bank transfer"
    })
    expect(await outbox(invoice.id)).toEqual([
      "invoice_created",
      "invoice_confirmed",
      "invoice_exception_opened",
      "invoice_exception_closed"
    ])
  })

  it("adds partial payments across options, handles overpayment and reorgs back", async () => {
    const { invoice, usdcEthereum, usdtArbitrum } = await newInvoice(30)
    const first = txHash()
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 10_000_000n, transactionHash: first })
    expect(await detail(invoice.id)).toMatchObject({
      status: "partially_paid",
      paymentCoverage: "partial_payment",
      paymentSummary: { remainingAmountUsd: 20, overpaymentAmountUsd: 0 }
    })
    await pay({ paymentOptionId: usdtArbitrum.id, amountAtomic: 25_000_000n })
    expect(await detail(invoice.id)).toMatchObject({
      status: "payment_detected",
      paymentCoverage: "overpayment",
      receivedAmountUsd: 35,
      paymentSummary: { remainingAmountUsd: 0, overpaymentAmountUsd: 5 },
      lastPaymentOptionId: usdtArbitrum.id,
      exceptionType: null
    })
    await invalidate("ethereum", first)
    expect(await detail(invoice.id)).toMatchObject({ receivedAmountUsd: 25, paymentCoverage: "partial_payment" })
    expect((await detail(invoice.id)).status).toBe("partially_paid")
    expect(await outbox(invoice.id)).toEqual([
      "invoice_created",
      "invoice_partially_paid",
      "invoice_payment_detected",
      "invoice_partially_paid"
    ])
  })

  it("rejects evidence for an unknown option and a non-positive amount", async () => {
    const { usdcEthereum } = await newInvoice(5)
    await expect(pay({ paymentOptionId: crypto.randomUUID(), amountAtomic: 1n })).rejects.toMatchObject({ _tag: "EvidenceRejected", reason: "unknown payment option" })
    await expect(pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 0n })).rejects.toMatchObject({ _tag: "EvidenceRejected", reason: "amount must be positive" })
  })
})

describe("deadlines and late payments", () => {
  it("expires unpaid invoices, and a partial one with a partial_payment exception", async () => {
    const unpaid = await newInvoice(10)
    const partial = await newInvoice(10)
    await pay({ paymentOptionId: partial.usdcEthereum.id, amountAtomic: 4_000_000n })
    await moveDeadlineToPast(unpaid.invoice.id)
    await moveDeadlineToPast(partial.invoice.id)
    expect(await sweep()).toBeGreaterThanOrEqual(2)
    expect(await detail(unpaid.invoice.id)).toMatchObject({ status: "expired", exceptionType: null })
    expect(await detail(partial.invoice.id)).toMatchObject({
      status: "expired",
      exceptionType: "partial_payment",
      exceptionStatus: "open"
    })
    expect(await outbox(partial.invoice.id)).toEqual([
      "invoice_created",
      "invoice_partially_paid",
      "invoice_expired",
      "invoice_exception_opened"
    ])
    expect(await sweep()).toBe(0)
  })

  it("opens late_payment for a late full payment and never confirms it by itself", async () => {
    const { invoice, usdcEthereum } = await newInvoice(10)
    await moveDeadlineToPast(invoice.id)
    const hash = txHash()
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 10_000_000n, transactionHash: hash, confirmations: 50 })
    const current = await detail(invoice.id)
    expect(current).toMatchObject({ status: "expired", exceptionType: "late_payment", exceptionStatus: "open", confirmedAt: null })
    expect(await outbox(invoice.id)).toEqual(["invoice_created", "invoice_expired", "invoice_exception_opened"])

    const recorded = await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "accepted late" } })
    expect(recorded.body).toMatchObject({
      status: "paid_out_of_band",
      exceptionStatus: "closed",
      exceptionAction: "mark_paid_out_of_band",
      exceptionNote: "accepted late",
      paidOutOfBandNote: "accepted late"
    })
    expect(recorded.body.exceptionClosedAt).not.toBeNull()
    expect(await outbox(invoice.id)).toEqual([
      "invoice_created",
      "invoice_expired",
      "invoice_exception_opened",
      "invoice_payment_recorded",
      "invoice_exception_closed"
    ])
  })

  it("closing an exception emits invoice_exception_closed, with the status event where the status moves", async () => {
    const unpaid = await newInvoice(10)
    await pay({ paymentOptionId: unpaid.usdcEthereum.id, amountAtomic: 4_000_000n })
    await moveDeadlineToPast(unpaid.invoice.id)
    await sweep()
    const closeUnpaid = await merchant.dashboard(`/api/dashboard/invoices/${unpaid.invoice.id}/exception/close`, {
      body: { action: "close_unpaid", note: "Refunded" }
    })
    expect(closeUnpaid.body).toMatchObject({ status: "expired", exceptionStatus: "closed", exceptionAction: "close_unpaid" })
    expect(await outbox(unpaid.invoice.id)).toEqual([
      "invoice_created",
      "invoice_partially_paid",
      "invoice_expired",
      "invoice_exception_opened",
      "invoice_exception_closed"
    ])

    const accepted = await newInvoice(10)
    await moveDeadlineToPast(accepted.invoice.id)
    await pay({ paymentOptionId: accepted.usdcEthereum.id, amountAtomic: 10_000_000n, confirmations: 12 })
    const accept = await merchant.dashboard(`/api/dashboard/invoices/${accepted.invoice.id}/exception/close`, {
      body: { action: "accept_late_payment", note: "Shipping" }
    })
    expect(accept.body).toMatchObject({ status: "confirmed", exceptionAction: "accept_late_payment", confirmedAmountUsd: 10 })
    expect(await outbox(accepted.invoice.id)).toEqual([
      "invoice_created",
      "invoice_expired",
      "invoice_exception_opened",
      "invoice_confirmed",
      "invoice_exception_closed"
    ])
  })

  it("treats any payment on a voided invoice as late", async () => {
    const { invoice, usdcEthereum } = await newInvoice(10)
    await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 3_000_000n })
    expect(await detail(invoice.id)).toMatchObject({ status: "voided", exceptionType: "partial_payment", exceptionStatus: "open" })
    await pay({ paymentOptionId: usdcEthereum.id, amountAtomic: 7_000_000n, confirmations: 99 })
    expect(await detail(invoice.id)).toMatchObject({ status: "voided", exceptionType: "late_payment", confirmedAt: null })
  })
})

describe("concurrency", () => {
  it("serialises simultaneous evidence and void on one invoice without losing an update", async () => {
    const { invoice, usdcEthereum } = await newInvoice(100)
    const amounts = Array.from({ length: 12 }, (_, index) => BigInt(index + 1) * 1_000_000n)
    const results = await Promise.allSettled([
      ...amounts.map((amountAtomic) => pay({ paymentOptionId: usdcEthereum.id, amountAtomic })),
      merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
    ])
    expect(results.every((result) => result.status === "fulfilled")).toBe(true)
    const current = await detail(invoice.id)
    const total = current.payments.reduce((sum: number, payment: any) => sum + payment.amountReceived, 0)
    expect(current.payments).toHaveLength(12)
    expect(current.receivedAmountUsd).toBe(total)
    expect(total).toBe(78)
    expect(["voided", "partially_paid"]).toContain(current.status)
    if (current.status === "voided") expect(current.exceptionStatus).toBe("open")
  })

  it("serialises simultaneous evidence and record-payment: the recorded status holds and every payment counts", async () => {
    const { invoice, usdtArbitrum } = await newInvoice(50)
    const results = await Promise.allSettled([
      ...Array.from({ length: 8 }, () => pay({ paymentOptionId: usdtArbitrum.id, amountAtomic: 5_000_000n })),
      merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "wire" } })
    ])
    expect(results.every((result) => result.status === "fulfilled")).toBe(true)
    const recorded = results.at(-1) as PromiseFulfilledResult<{ status: number }>
    const current = await detail(invoice.id)
    expect(current.receivedAmountUsd).toBe(40)
    expect(current.payments).toHaveLength(8)
    if (recorded.value.status === 200) expect(current.status).toBe("paid_out_of_band")
    else expect(recorded.value.status).toBe(409)
    const events = await outbox(invoice.id)
    expect(events.filter((event) => event === "invoice_payment_recorded").length).toBe(recorded.value.status === 200 ? 1 : 0)
  })
})
