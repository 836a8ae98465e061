import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { PUBLIC_URL, publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"

const INVOICE_KEYS = [
  "id",
  "paymentUrl",
  "amountUsd",
  "status",
  "paymentCoverage",
  "receivedAmountUsd",
  "confirmedAmountUsd",
  "confirmations",
  "productName",
  "issuedBy",
  "billTo",
  "redirectUrl",
  "lastTransactionHash",
  "merchantReference",
  "customerId",
  "customerEmail",
  "metadata",
  "paymentSummary",
  "paymentTiming",
  "paymentOptions",
  "defaultPaymentOptionId",
  "lastPaymentOptionId",
  "paymentDetectedAt",
  "confirmedAt",
  "paidOutOfBandAt",
  "paidOutOfBandNote",
  "exceptionType",
  "exceptionStatus",
  "exceptionAction",
  "exceptionNote",
  "exceptionClosedAt",
  "createdAt",
  "lastPaymentObservedAt",
  "livemode"
].sort()

const OPTION_KEYS = [
  "id",
  "railType",
  "assetCode",
  "network",
  "tokenContract",
  "quotedAmount",
  "quoteRate",
  "destinationAddress",
  "paymentUri",
  "qrCode",
  "status",
  "isDefault",
  "optionPayload"
].sort()

const STATUS_KEYS = [
  "status",
  "paymentCoverage",
  "receivedAmountUsd",
  "confirmedAmountUsd",
  "confirmations",
  "paymentDetectedAt",
  "confirmedAt",
  "paidOutOfBandAt",
  "paidOutOfBandNote",
  "paymentTiming",
  "paymentSummary",
  "paymentOptions",
  "defaultPaymentOptionId",
  "lastPaymentOptionId",
  "payments",
  "lastPaymentObservedAt",
  "livemode"
].sort()

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const countInvoices = (merchantId: string) =>
  Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices WHERE merchant_id = ${merchantId}`.pipe(Effect.map((rows) => rows[0].count)))

const create = (body: unknown, headers?: Record<string, string>) => merchant.api("/api/checkout/invoices", { body, ...(headers ? { headers } : {}) })

describe("POST /api/checkout/invoices", () => {
  it("creates an invoice with every field of the spec and no payments", async () => {
    const before = Date.now()
    const { status, body } = await create({
      amountUsd: 42.5,
      productName: "Tea",
      billTo: "ACME Ltd",
      redirectUrl: "https://shop.example/thanks",
      merchantReference: "order-1",
      customerId: "cust-9",
      customerEmail: "buyer@example.com",
      metadata: { notes: "gift", sku: ["a", "b"] }
    })
    expect(status).toBe(201)
    expect(Object.keys(body).sort()).toEqual(INVOICE_KEYS)
    expect(body).not.toHaveProperty("payments")
    expect(body.id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/)
    expect(body.paymentUrl).toBe(`${PUBLIC_URL}/pay/${body.id}`)
    expect(body).toMatchObject({
      amountUsd: 42.5,
      status: "awaiting_payment",
      paymentCoverage: "no_payment",
      receivedAmountUsd: 0,
      confirmedAmountUsd: 0,
      confirmations: 0,
      productName: "Tea",
      issuedBy: "Test Store",
      billTo: "ACME Ltd",
      redirectUrl: "https://shop.example/thanks",
      merchantReference: "order-1",
      customerId: "cust-9",
      customerEmail: "buyer@example.com",
      metadata: { notes: "gift", sku: ["a", "b"] },
      lastTransactionHash: null,
      lastPaymentOptionId: null,
      paymentDetectedAt: null,
      confirmedAt: null,
      paidOutOfBandAt: null,
      paidOutOfBandNote: null,
      exceptionType: null,
      exceptionStatus: null,
      exceptionAction: null,
      exceptionNote: null,
      exceptionClosedAt: null,
      lastPaymentObservedAt: null,
      paymentSummary: {
        paymentCoverage: "no_payment",
        receivedAmountUsd: 0,
        confirmedAmountUsd: 0,
        remainingAmountUsd: 42.5,
        overpaymentAmountUsd: 0
      }
    })
    const createdAt = Date.parse(body.createdAt)
    expect(createdAt).toBeGreaterThanOrEqual(before - 1000)
    expect(body.paymentTiming).toEqual({
      mode: "immediate",
      expiresAfterMinutes: 60,
      payableUntilAt: new Date(createdAt + 60 * 60_000).toISOString()
    })
    expect(body.paymentOptions).toHaveLength(5)
    for (const option of body.paymentOptions) {
      expect(Object.keys(option).sort()).toEqual(OPTION_KEYS)
      expect(option.status).toBe("active")
    }
    const defaults = body.paymentOptions.filter((option: OptionJson) => option.isDefault)
    expect(defaults).toHaveLength(1)
    expect(body.defaultPaymentOptionId).toBe(defaults[0].id)
  })

  it("resolves a due-date override and leaves bitcoin out", async () => {
    const { status, body } = await create({ amountUsd: 10, paymentTiming: { mode: "due_date", dueAfterDays: 7, gracePeriodDays: 2 } })
    expect(status).toBe(201)
    const createdAt = Date.parse(body.createdAt)
    expect(body.paymentTiming).toEqual({
      mode: "due_date",
      dueAfterDays: 7,
      gracePeriodDays: 2,
      dueAt: new Date(createdAt + 7 * 86_400_000).toISOString(),
      payableUntilAt: new Date(createdAt + 9 * 86_400_000).toISOString()
    })
    expect(body.paymentOptions.map((option: OptionJson) => option.network)).not.toContain("bitcoin")
    expect(body.paymentOptions.filter((option: OptionJson) => option.isDefault)).toHaveLength(1)
  })

  it("keeps merchant metadata exactly as sent, keys included", async () => {
    const metadata = { order_id: "A-1", nested_obj: { inner_key: [1, { deep_key: null }] }, camelCase: true }
    const { body } = await create({ amountUsd: 1, metadata })
    expect(body.metadata).toEqual(metadata)
    expect((await merchant.api(`/api/checkout/invoices/${body.id}`)).body.metadata).toEqual(metadata)
  })

  it("overrides issuedBy and treats null optional fields as absent", async () => {
    const { status, body } = await create({ amountUsd: 1, issuedBy: "Other Shop", productName: null, metadata: null })
    expect(status).toBe(201)
    expect(body.issuedBy).toBe("Other Shop")
    expect(body.productName).toBeNull()
    expect(body.metadata).toBeNull()
  })

  const limits: Array<[string, number, (n: number) => unknown]> = [
    ["productName", 200, (n) => "p".repeat(n)],
    ["issuedBy", 120, (n) => "i".repeat(n)],
    ["billTo", 120, (n) => "b".repeat(n)],
    ["merchantReference", 200, (n) => "r".repeat(n)],
    ["customerId", 200, (n) => "c".repeat(n)],
    ["customerEmail", 320, (n) => `${"e".repeat(n - 12)}@example.com`]
  ]
  for (const [field, max, value] of limits) {
    it(`accepts ${field} of ${max} characters and rejects ${max + 1}`, async () => {
      expect((await create({ amountUsd: 5, [field]: value(max) })).status).toBe(201)
      const rejected = await create({ amountUsd: 5, [field]: value(max + 1) })
      expect(rejected.status).toBe(400)
      expect(rejected.body).toEqual({ error: `${field} must be at most ${max} characters` })
    })
  }

  it("checks metadata.notes at 140 and 141 characters and its type", async () => {
    expect((await create({ amountUsd: 5, metadata: { notes: "n".repeat(140) } })).status).toBe(201)
    for (const [notes, error] of [["n".repeat(141), "metadata.notes must be at most 140 characters"], [12, "metadata.notes must be a string"]] as const) {
      const rejected = await create({ amountUsd: 5, metadata: { notes } })
      expect(rejected.status).toBe(400)
      expect(rejected.body).toEqual({ error })
    }
  })

  it("checks amountUsd", async () => {
    expect((await create({ amountUsd: 0.01 })).status).toBe(201)
    const cases: Array<[unknown, string]> = [
      [{}, "amountUsd is required"],
      [{ amountUsd: 0.009 }, "amountUsd must be at least 0.01"],
      [{ amountUsd: 0 }, "amountUsd must be at least 0.01"],
      [{ amountUsd: -5 }, "amountUsd must be at least 0.01"],
      [{ amountUsd: "10" }, "amountUsd must be a number"],
      [{ amountUsd: 1.005 }, "amountUsd must have at most 2 decimal places"],
      [{ amountUsd: null }, "amountUsd must be a number"]
    ]
    for (const [body, error] of cases) {
      const response = await create(body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(response.body).toEqual({ error })
    }
  })

  it("names the first invalid field", async () => {
    const response = await create({ amountUsd: 0, productName: "x".repeat(300) })
    expect(response.body).toEqual({ error: "amountUsd must be at least 0.01" })
  })

  it("rejects bad paymentTiming, redirectUrl, email and metadata shapes", async () => {
    const cases: Array<[unknown, string]> = [
      [{ amountUsd: 5, paymentTiming: { mode: "weekly" } }, "paymentTiming.mode must be one of immediate, due_date"],
      [{ amountUsd: 5, paymentTiming: { mode: "immediate" } }, "paymentTiming.expiresAfterMinutes is required"],
      [{ amountUsd: 5, paymentTiming: { mode: "due_date" } }, "paymentTiming.dueAfterDays is required"],
      [{ amountUsd: 5, paymentTiming: { mode: "immediate", expiresAfterMinutes: 2 } }, "paymentTiming.expiresAfterMinutes must be at least 5"],
      [{ amountUsd: 5, redirectUrl: "javascript:alert(1)" }, "redirectUrl must be an absolute http or https URL"],
      [{ amountUsd: 5, customerEmail: "not-an-email" }, "customerEmail must be an email address"],
      [{ amountUsd: 5, metadata: ["a"] }, "metadata must be a JSON object"],
      [{ amountUsd: 5, productName: 7 }, "productName must be a string"]
    ]
    for (const [body, error] of cases) {
      const response = await create(body)
      expect(response.status, JSON.stringify(body)).toBe(400)
      expect(response.body).toEqual({ error })
    }
  })

  it("refuses unknown body fields, nested ones included, instead of ignoring them (money is at stake)", async () => {
    const before = await app.run(countInvoices(merchant.merchantId))
    const cases: Array<[unknown, string]> = [
      [{ amountUsd: 1, currency: "EUR" }, "currency is not a known field"],
      [{ amountUsd: 5, paymentTiming: { mode: "immediate", expiresAfterMinutes: 30, expiresAfterHours: 1 } }, "paymentTiming.expiresAfterHours is not a known field"],
      [{ amountUsd: 5, amount_usd: 5 }, "amount_usd is not a known field"]
    ]
    for (const [body, error] of cases) {
      expect(await create(body), JSON.stringify(body)).toMatchObject({ status: 400, body: { error } })
    }
    expect(await app.run(countInvoices(merchant.merchantId))).toBe(before)
    // metadata is the merchant's own object: any key is welcome there
    expect((await create({ amountUsd: 5, metadata: { currency: "EUR", anything: { nested: true } } })).status).toBe(201)
  })

  it("answers 400 with a message for malformed JSON, a non-object body, a wrong content type and an oversized body", async () => {
    const malformed = await merchant.api("/api/checkout/invoices", { body: "{not json" })
    expect(malformed.status).toBe(400)
    expect(malformed.body).toEqual({ error: "Request body must be valid JSON" })
    const array = await merchant.api("/api/checkout/invoices", { body: "[1,2]" })
    expect(array).toMatchObject({ status: 400, body: { error: "Request body must be a JSON object" } })
    const text = await merchant.api("/api/checkout/invoices", { body: "amountUsd=5", headers: { "content-type": "text/plain" } })
    expect(text).toMatchObject({ status: 400, body: { error: "Content-Type must be application/json" } })
    const huge = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, metadata: { blob: "x".repeat(200_000) } } })
    expect(huge.status).toBe(413)
    expect(huge.body.error).toMatch(/too large/)
  })

  it("answers 404 without checkout settings and 409 for timing and method problems", async () => {
    const unconfigured = await app.createMerchant({ withSettings: false })
    expect(await unconfigured.api("/api/checkout/invoices", { body: { amountUsd: 5 } })).toMatchObject({
      status: 404,
      body: { error: "Checkout settings are not configured yet: save them in the dashboard" }
    })
    const bitcoinOnly = await app.createMerchant({
      methods: [{ network: "bitcoin", assetCode: "BTC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null,
        xpub: "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs" }]
    })
    const dueDate = await bitcoinOnly.api("/api/checkout/invoices", {
      body: { amountUsd: 5, paymentTiming: { mode: "due_date", dueAfterDays: 3 } }
    })
    expect(dueDate).toMatchObject({ status: 409, body: { error: "A due-date invoice requires an enabled USDT or USDC payment method" } })
    const nothingEnabled = await app.createMerchant({ methods: [] })
    expect(await nothingEnabled.api("/api/checkout/invoices", { body: { amountUsd: 5 } })).toMatchObject({
      status: 409,
      body: { error: "No enabled payment method is available for this invoice" }
    })
  })

  it("never returns an option the merchant has not enabled", async () => {
    const solanaOnly = await app.createMerchant({
      methods: [
        { network: "solana", assetCode: "USDT", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: "4gszGKfoqBgiFEHU26LhksAhVtJeKoiYQFAN28ZR2c6x",
          xpub: null },
        { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: false, isDefault: true, recipientAddress: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
          xpub: null }
      ]
    })
    const { body } = await solanaOnly.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
    expect(body.paymentOptions.map((option: OptionJson) => `${option.network}:${option.assetCode}`)).toEqual(["solana:USDT"])
    expect(body.paymentOptions[0].isDefault).toBe(true)
  })

  it("checks a paymentTiming override at the edge: 400 before the settings lookup and the billing check (#48)", async () => {
    const badTiming = { amountUsd: 5, paymentTiming: { mode: "immediate", dueAfterDays: 3 } }
    const unconfigured = await app.createMerchant({ withSettings: false })
    expect(await unconfigured.api("/api/checkout/invoices", { body: badTiming })).toMatchObject({
      status: 400,
      body: { error: "paymentTiming.dueAfterDays is not allowed with mode immediate" }
    })
    const blocked = await app.createMerchant({ withSettings: false })
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setBillingStatus(blocked.merchantId, "blocked")))
    expect(await blocked.api("/api/checkout/invoices", { body: { amountUsd: 5, paymentTiming: { mode: "due_date" } } })).toMatchObject({
      status: 400,
      body: { error: "paymentTiming.dueAfterDays is required" }
    })
  })

  it("names the first invalid field in the body's order, not the schema's (#48)", async () => {
    expect(await create({ productName: 5, amountUsd: "x" })).toMatchObject({ status: 400, body: { error: "productName must be a string" } })
    expect(await create({ amountUsd: "x", productName: 5 })).toMatchObject({ status: 400, body: { error: "amountUsd must be a number" } })
    expect(await create({ customerEmail: "nobody", amountUsd: 1.001 })).toMatchObject({ status: 400, body: { error: "customerEmail must be an email address" } })
  })

  it("ranks paymentTiming's mode rules with the other checks in the body's order (#52 item 6)", async () => {
    const cases: Array<[unknown, string]> = [
      [{ paymentTiming: { mode: "immediate" }, amountUsd: 0 }, "paymentTiming.expiresAfterMinutes is required"],
      [{ amountUsd: 0, paymentTiming: { mode: "immediate" } }, "amountUsd must be at least 0.01"],
      [{ amountUsd: 5, paymentTiming: { mode: "due_date" }, productName: 5 }, "paymentTiming.dueAfterDays is required"],
      [{ amountUsd: 5, paymentTiming: { mode: "immediate", expiresAfterMinutes: 30, gracePeriodDays: 1 }, billTo: 5 },
        "paymentTiming.gracePeriodDays is not allowed with mode immediate"],
      // a body the schema accepts, with two mode problems: the first as sent (the handler's check)
      [{ amountUsd: 5, paymentTiming: { mode: "immediate", gracePeriodDays: 1, dueAfterDays: 2 } }, "paymentTiming.gracePeriodDays is not allowed with mode immediate"],
      [{ amountUsd: 5, paymentTiming: { mode: "immediate", dueAfterDays: 2, gracePeriodDays: 1 } }, "paymentTiming.dueAfterDays is not allowed with mode immediate"]
    ]
    for (const [body, error] of cases) expect(await create(body), JSON.stringify(body)).toMatchObject({ status: 400, body: { error } })
    // A mode-rule 400 of a body the schema accepts is still the use case's answer, stored for its key.
    const key = crypto.randomUUID()
    const refused = { amountUsd: 5, paymentTiming: { mode: "immediate", gracePeriodDays: 1, dueAfterDays: 2 } }
    expect(await create(refused, { "idempotency-key": key })).toMatchObject({ status: 400 })
    expect(await create({ amountUsd: 5 }, { "idempotency-key": key })).toMatchObject({ status: 409 })
  })

  it("answers 403 when billing blocks invoice creation", async () => {
    const blocked = await app.createMerchant()
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setBillingStatus(blocked.merchantId, "blocked")))
    const response = await blocked.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
    expect(response.status).toBe(403)
    expect(response.body.error).toMatch(/billing/)
  })
})

describe("idempotency", () => {
  it("replays the same request and refuses another body with the same key", async () => {
    const key = crypto.randomUUID()
    const first = await create({ amountUsd: 12 }, { "idempotency-key": key })
    const again = await create({ amountUsd: 12 }, { "idempotency-key": key })
    expect(first.status).toBe(201)
    expect(again.status).toBe(201)
    expect(again.body).toEqual(first.body)
    const other = await create({ amountUsd: 13 }, { "idempotency-key": key })
    expect(other.status).toBe(409)
    expect(other.body.error).toMatch(/different request body/)
    const tooLong = await create({ amountUsd: 13 }, { "idempotency-key": "k".repeat(256) })
    expect(tooLong).toMatchObject({ status: 400, body: { error: "Idempotency-Key must be 1 to 255 characters" } })
  })

  it("creates one invoice for simultaneous requests with one key", async () => {
    const key = crypto.randomUUID()
    const responses = await Promise.all(Array.from({ length: 6 }, () => create({ amountUsd: 7 }, { "idempotency-key": key })))
    const created = new Set(responses.filter((response) => response.status === 201).map((response) => response.body.id))
    expect(created.size).toBe(1)
    for (const response of responses) expect([201, 409]).toContain(response.status)
    const replay = await create({ amountUsd: 7 }, { "idempotency-key": key })
    expect(replay.body.id).toBe([...created][0])
  })

  it("keys are per merchant", async () => {
    const key = crypto.randomUUID()
    const other = await app.createMerchant()
    const mine = await create({ amountUsd: 3 }, { "idempotency-key": key })
    const theirs = await other.api("/api/checkout/invoices", { body: { amountUsd: 4 }, headers: { "idempotency-key": key } })
    expect(theirs.status).toBe(201)
    expect(theirs.body.id).not.toBe(mine.body.id)
  })
})

describe("detail, status, void and record-payment", () => {
  it("detail and status include payments; status has exactly the spec's fields", async () => {
    const { body: invoice } = await create({ amountUsd: 20 })
    const detail = await merchant.api(`/api/checkout/invoices/${invoice.id}`)
    expect(detail.status).toBe(200)
    expect(detail.body.payments).toEqual([])
    expect(Object.keys(detail.body).sort()).toEqual([...INVOICE_KEYS, "payments"].sort())
    const status = await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)
    expect(status.status).toBe(200)
    expect(Object.keys(status.body).sort()).toEqual(STATUS_KEYS)
    expect(status.body.payments).toEqual([])
    expect(status.body.paymentOptions).toEqual(invoice.paymentOptions)
  })

  it("400 for an invalid id, 404 for an unknown one and for another merchant's invoice", async () => {
    const { body: invoice } = await create({ amountUsd: 20 })
    const other = await app.createMerchant()
    for (const path of ["", "/status"]) {
      expect(await merchant.api(`/api/checkout/invoices/not-a-uuid${path}`)).toMatchObject({
        status: 400,
        body: { error: "id must be a valid UUID" }
      })
      expect(await merchant.api(`/api/checkout/invoices/${crypto.randomUUID()}${path}`)).toMatchObject({
        status: 404,
        body: { error: "Invoice not found" }
      })
      expect(await other.api(`/api/checkout/invoices/${invoice.id}${path}`)).toMatchObject({ status: 404 })
    }
    expect(await other.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })).toMatchObject({ status: 404 })
    expect(await other.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "x" } })).toMatchObject({ status: 404 })
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}`)).body.status).toBe("awaiting_payment")
  })

  it("void takes an empty object and refuses fields; record-payment refuses unknown fields", async () => {
    const { body: a } = await create({ amountUsd: 20 })
    expect(await merchant.api(`/api/checkout/invoices/${a.id}/void`, { body: { reason: "duplicate" } })).toMatchObject({
      status: 400,
      body: { error: "reason is not a known field" }
    })
    expect(await merchant.api(`/api/checkout/invoices/${a.id}/void`, { body: [] })).toMatchObject({
      status: 400,
      body: { error: "Request body must be a JSON object" }
    })
    expect(await merchant.api(`/api/checkout/invoices/${a.id}/record-payment`, { body: { note: "wire", amountUsd: 20 } })).toMatchObject({
      status: 400,
      body: { error: "amountUsd is not a known field" }
    })
    expect((await merchant.api(`/api/checkout/invoices/${a.id}`)).body.status).toBe("awaiting_payment")
  })

  it("voids an awaiting invoice once; void and record-payment afterwards answer 409", async () => {
    const { body: invoice } = await create({ amountUsd: 20 })
    const voided = await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
    expect(voided.status).toBe(200)
    expect(voided.body.status).toBe("voided")
    expect(voided.body.payments).toEqual([])
    const again = await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
    expect(again.status).toBe(409)
    expect(again.body.error).toMatch(/voided/)
    const record = await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "cash" } })
    expect(record).toMatchObject({
      status: 409,
      body: { error: "A payment can be recorded only for an invoice that is awaiting_payment, partially_paid or expired; this invoice is voided" }
    })
  })

  it("records an external payment with its note and time; public endpoints never show the note", async () => {
    const { body: invoice } = await create({ amountUsd: 20, merchantReference: "secret-ref", metadata: { a: 1 } })
    const recorded = await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "Paid by wire 123" } })
    expect(recorded.status).toBe(200)
    expect(recorded.body).toMatchObject({ status: "paid_out_of_band", paidOutOfBandNote: "Paid by wire 123" })
    expect(Date.parse(recorded.body.paidOutOfBandAt)).toBeGreaterThan(0)
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/status`)).body.paidOutOfBandNote).toBe("Paid by wire 123")
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })).status).toBe(409)
    expect((await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: "again" } })).status).toBe(409)

    const page = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}`)
    expect(page.status).toBe(200)
    for (const key of ["merchantReference", "customerId", "customerEmail", "metadata", "paidOutOfBandNote", "exceptionNote"]) {
      expect(page.body).not.toHaveProperty(key)
    }
    expect(page.body.payments).toEqual([])
    expect(page.body.paidOutOfBandAt).toBe(recorded.body.paidOutOfBandAt)
    expect(JSON.stringify(page.body)).not.toContain("secret-ref")
    const publicStatus = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}/status`)
    expect(publicStatus.status).toBe(200)
    // the merchant status shape, with the note present as null
    expect(Object.keys(publicStatus.body).sort()).toEqual(STATUS_KEYS)
    expect(publicStatus.body.paidOutOfBandNote).toBeNull()
    expect(JSON.stringify(publicStatus.body)).not.toContain("Paid by wire")
  })

  it("validates the record-payment note at 2000 and 2001 characters, and refuses one empty or of only whitespace", async () => {
    const { body: a } = await create({ amountUsd: 20 })
    const { body: b } = await create({ amountUsd: 20 })
    expect(await merchant.api(`/api/checkout/invoices/${a.id}/record-payment`, { body: {} })).toMatchObject({
      status: 400,
      body: { error: "note is required" }
    })
    expect(await merchant.api(`/api/checkout/invoices/${a.id}/record-payment`, { body: { note: "n".repeat(2001) } })).toMatchObject({
      status: 400,
      body: { error: "note must be at most 2000 characters" }
    })
    for (const note of ["", "   ", "\t\n"]) {
      expect(await merchant.api(`/api/checkout/invoices/${a.id}/record-payment`, { body: { note } })).toMatchObject({
        status: 400,
        body: { error: "note must not be empty" }
      })
    }
    expect((await merchant.api(`/api/checkout/invoices/${b.id}/record-payment`, { body: { note: "n".repeat(2000) } })).status).toBe(200)
    expect((await merchant.api(`/api/checkout/invoices/${a.id}`)).body.status).toBe("awaiting_payment")
  })
})

describe("public endpoints", () => {
  it("serve payer data without authentication and 404/400 like the merchant ones", async () => {
    const { body: invoice } = await create({ amountUsd: 9, customerEmail: "hidden@example.com" })
    const page = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoice.id}`)
    expect(page.status).toBe(200)
    expect(page.body.paymentOptions).toEqual(invoice.paymentOptions)
    expect(page.body.paymentOptions.some((option: OptionJson) => typeof option.qrCode === "string" && option.qrCode.startsWith("<svg"))).toBe(true)
    expect(JSON.stringify(page.body)).not.toContain("hidden@example.com")
    expect((await publicRequest(app.baseUrl, `/api/checkout/pay/${crypto.randomUUID()}`)).status).toBe(404)
    expect((await publicRequest(app.baseUrl, `/api/checkout/pay/nope/status`)).status).toBe(400)
  })
})

describe("authentication", () => {
  it("answers the spec's 401 bodies", async () => {
    const missing = await publicRequest(app.baseUrl, "/api/checkout/invoices", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ amountUsd: 5 })
    })
    expect(missing).toMatchObject({ status: 401, body: { error: "Missing API key or session" } })
    const invalid = await publicRequest(app.baseUrl, `/api/checkout/invoices/${crypto.randomUUID()}`, {
      headers: { "x-api-key": "svc_live_" + "A".repeat(43) }
    })
    expect(invalid).toMatchObject({ status: 401, body: { error: "Invalid API key" } })
    const garbage = await publicRequest(app.baseUrl, `/api/checkout/invoices/${crypto.randomUUID()}`, { headers: { "x-api-key": "nope" } })
    expect(garbage).toMatchObject({ status: 401, body: { error: "Invalid API key" } })
  })

  it("answers 403 Forbidden for a disabled account and restores access when enabled", async () => {
    const account = await app.createMerchant()
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setStatus(account.merchantId, "disabled")))
    expect(await account.api("/api/checkout/invoices", { body: { amountUsd: 5 } })).toMatchObject({
      status: 403,
      body: { error: "Forbidden" }
    })
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setStatus(account.merchantId, "active")))
    expect((await account.api("/api/checkout/invoices", { body: { amountUsd: 5 } })).status).toBe(201)
  })
})

describe("documentation", () => {
  it("serves the OpenAPI document and the docs page", async () => {
    const openapi = await publicRequest(app.baseUrl, "/api/openapi.json")
    expect(openapi.status).toBe(200)
    expect(Object.keys(openapi.body.paths)).toEqual(expect.arrayContaining([
      "/api/checkout/invoices",
      "/api/checkout/invoices/{id}",
      "/api/checkout/invoices/{id}/status",
      "/api/checkout/invoices/{id}/void",
      "/api/checkout/invoices/{id}/record-payment",
      "/api/checkout/pay/{id}",
      "/api/checkout/pay/{id}/status"
    ]))
    const docs = await fetch(`${app.baseUrl}/docs`)
    expect(docs.status).toBe(200)
    expect(docs.headers.get("content-type")).toMatch(/text\/html/)
    const unknown = await publicRequest(app.baseUrl, "/api/nothing-here")
    expect(unknown).toMatchObject({ status: 404, body: { error: "Not found" } })
  })

  it("GET / redirects to the docs", async () => {
    const root = await fetch(`${app.baseUrl}/`, { redirect: "manual" })
    expect(root.status).toBe(302)
    expect(root.headers.get("location")).toBe("/docs")
    const followed = await fetch(`${app.baseUrl}/`)
    expect(followed.status).toBe(200)
    expect(followed.headers.get("content-type")).toMatch(/text\/html/)
  })
})

describe("API key scope", () => {
  it("answers 403 to a key on any route other than the merchant endpoints", async () => {
    for (const [method, path] of [["GET", "/api/checkout/invoices"], ["GET", "/api/users/x/checkout-api-keys"], ["POST", "/api/dashboard/anything"]]) {
      const response = await merchant.api(path, { method })
      expect(response.status, path).toBe(403)
      expect(response.body.error).toMatch(/API keys/)
    }
    expect((await publicRequest(app.baseUrl, "/api/users/x/checkout-api-keys")).status).toBe(401)
  })
})
