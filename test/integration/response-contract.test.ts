import { Schema } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { InvoiceStatusView as InvoiceStatusPayload, InvoiceView as Invoice, PublicInvoiceStatusView as PublicInvoiceStatusPayload, PublicInvoiceView as PublicInvoice } from "../../src/invoices/InvoiceResponses.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

// The invoice endpoints answer with views serialised directly (src/http/JsonResponse.ts), not
// through the schema's encoder: every answer must still be exactly its schema, no key more or less.
let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const strict = <S extends Schema.Top>(schema: S, body: unknown) =>
  Schema.decodeUnknownSync(schema as unknown as Schema.Codec<unknown, unknown>)(body, { onExcessProperty: "error" })

const optionOf = (invoice: any, network: string) => invoice.paymentOptions.find((option: any) => option.network === network)

/** Invoices in the states the views branch on: fresh, due-date, paid and confirmed, detected, late with an exception, voided, paid out of band. */
const invoicesInEveryShape = async () => {
  const create = async (body: Record<string, unknown>) => {
    const created = await merchant.api("/api/checkout/invoices", { body })
    expect(created.status).toBe(201)
    strict(Invoice, created.body)
    expect(created.body).not.toHaveProperty("payments")
    return created.body
  }
  const fresh = await create({ amountUsd: 12.34, metadata: { order: "A-1" }, merchantReference: "ref-1", customerEmail: "a@b.test" })
  const dueDate = await create({ amountUsd: 50, paymentTiming: { mode: "due_date", dueAfterDays: 7, gracePeriodDays: 2 } })
  const paid = await create({ amountUsd: 10 })
  await merchant.dashboard(`/api/dev/invoices/${paid.id}/simulate-payment`, {
    body: { paymentOptionId: optionOf(paid, "base").id, amount: "10", confirmations: 30, transactionHash: `0xfeed${crypto.randomUUID().replaceAll("-", "")}` }
  })
  const late = await create({ amountUsd: 10 })
  await merchant.dashboard(`/api/dev/invoices/${late.id}/simulate-expiry`, { body: {} })
  await merchant.dashboard(`/api/dev/invoices/${late.id}/simulate-payment`, {
    body: { paymentOptionId: optionOf(late, "solana").id, amount: "4", confirmations: 40, late: true }
  })
  const detected = await create({ amountUsd: 10 })
  await merchant.dashboard(`/api/dev/invoices/${detected.id}/simulate-payment`, {
    body: { paymentOptionId: optionOf(detected, "base").id, amount: "10", confirmations: 1 }
  })
  const voided = await create({ amountUsd: 3 })
  expect((await merchant.api(`/api/checkout/invoices/${voided.id}/void`, { body: {} })).status).toBe(200)
  const outOfBand = await create({ amountUsd: 7 })
  expect((await merchant.api(`/api/checkout/invoices/${outOfBand.id}/record-payment`, { body: { note: "wire" } })).status).toBe(200)
  return [fresh, dueDate, paid, detected, late, voided, outOfBand]
}

describe("invoice responses match their schemas exactly", () => {
  it("create, detail, status, public invoice and public status, in every state", async () => {
    const invoices = await invoicesInEveryShape()
    const statuses = new Set<string>()
    for (const invoice of invoices) {
      const detail = await merchant.api(`/api/checkout/invoices/${invoice.id}`)
      expect(detail.headers.get("content-type")).toBe("application/json")
      expect(strict(Invoice, detail.body)).toEqual(detail.body)
      expect(detail.body.payments).toBeInstanceOf(Array)
      statuses.add(detail.body.status)

      const status = await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)
      expect(strict(InvoiceStatusPayload, status.body)).toEqual(status.body)

      const publicInvoice = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}`)
      expect(strict(PublicInvoice, publicInvoice.body)).toEqual(publicInvoice.body)
      for (const hidden of ["metadata", "merchantReference", "customerId", "customerEmail", "paidOutOfBandNote", "exceptionNote"]) {
        expect(publicInvoice.body).not.toHaveProperty(hidden)
      }

      const publicStatus = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/status`)
      expect(strict(PublicInvoiceStatusPayload, publicStatus.body)).toEqual(publicStatus.body)
      expect(Object.keys(publicStatus.body).sort()).toEqual(Object.keys(status.body).sort())
      expect(publicStatus.body.paidOutOfBandNote).toBeNull()
    }
    expect([...statuses].sort()).toEqual(["awaiting_payment", "confirmed", "expired", "paid_out_of_band", "payment_detected", "voided"])
  })

  it("payment options are active while the invoice can be paid and inactive once it cannot", async () => {
    const invoices = await invoicesInEveryShape()
    const seen = new Map<string, string>()
    for (const invoice of invoices) {
      const detail = await merchant.api(`/api/checkout/invoices/${invoice.id}`)
      const expected = ["awaiting_payment", "partially_paid", "payment_detected"].includes(detail.body.status) ? "active" : "inactive"
      seen.set(detail.body.status, expected)
      const answers = [
        detail.body,
        (await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)).body,
        (await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}`)).body,
        (await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/status`)).body
      ]
      for (const answer of answers) {
        expect(answer.paymentOptions.length).toBeGreaterThan(0)
        for (const option of answer.paymentOptions) expect(option.status, `${detail.body.status} option`).toBe(expected)
      }
    }
    expect(Object.fromEntries(seen)).toEqual({
      awaiting_payment: "active",
      payment_detected: "active",
      confirmed: "inactive",
      expired: "inactive",
      voided: "inactive",
      paid_out_of_band: "inactive"
    })
  })

  it("rejects a body with a key the schema does not have (the check above can fail)", () => {
    expect(() => strict(PublicInvoiceStatusPayload, { unknownKey: null })).toThrow()
  })
})
