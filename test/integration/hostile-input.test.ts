import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const NUL = "\u0000"
const LONE = "\ud800"
const countInvoices = () =>
  app.run(Effect.flatMap(SqlClient.SqlClient, (sql) =>
    sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices WHERE merchant_id = ${merchant.merchantId}`.pipe(
      Effect.map((rows) => rows[0].count)
    )))
const create = (body: unknown) => merchant.api("/api/checkout/invoices", { body })
const rawPost = (path: string, body: BodyInit, headers: Record<string, string>) =>
  publicRequest(app.baseUrl, path, { method: "POST", body, headers })

describe("hostile input is refused at the edge with 400, never 500 or 502", () => {
  it("refuses a NUL in any create field, metadata key or value, and stores nothing", async () => {
    const before = await countInvoices()
    const cases: ReadonlyArray<[unknown, string]> = [
      [{ amountUsd: 5, productName: `T${NUL}shirt` }, "productName must not contain a NUL character (\\u0000)"],
      [{ amountUsd: 5, productName: "T", issuedBy: `Shop${NUL}` }, "issuedBy must not contain a NUL character (\\u0000)"],
      [{ amountUsd: 5, productName: "T", metadata: { [`k${NUL}`]: "v" } }, "A field name in metadata must not contain a NUL character (\\u0000)"],
      [{ amountUsd: 5, productName: "T", metadata: { order: `1${NUL}` } }, "metadata.order must not contain a NUL character (\\u0000)"]
    ]
    for (const [body, error] of cases) {
      expect(await create(body)).toMatchObject({ status: 400, body: { error } })
    }
    expect(await countInvoices()).toBe(before)
  })

  it("refuses an unpaired surrogate in metadata and issuedBy (no 'backend unavailable' 502), and keeps a proper pair", async () => {
    expect(await create({ amountUsd: 5, productName: "T", metadata: { note: `a${LONE}` } })).toMatchObject({
      status: 400,
      body: { error: "metadata.note must be valid Unicode text (it contains an unpaired surrogate)" }
    })
    expect(await create({ amountUsd: 5, productName: "T", issuedBy: `x${LONE}` })).toMatchObject({
      status: 400,
      body: { error: "issuedBy must be valid Unicode text (it contains an unpaired surrogate)" }
    })
    const emoji = await create({ amountUsd: 5, productName: "T \ud83d\ude00" })
    expect(emoji.status).toBe(201)
    expect(emoji.body.productName).toBe("T \ud83d\ude00")
  })

  it("refuses NULs in notes, webhook URL, delivery search, and in the unauthenticated login and sign-up", async () => {
    const { body: invoice } = await create({ amountUsd: 5, productName: "T" })
    expect(await merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: `wire${NUL}` } }))
      .toMatchObject({ status: 400, body: { error: "note must not contain a NUL character (\\u0000)" } })
    expect(await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: `https://shop.example/h${NUL}` } }))
      .toMatchObject({ status: 400, body: { error: "url must not contain a NUL character (\\u0000)" } })
    expect(await merchant.dashboard("/api/dashboard/webhook-deliveries?q=a%00b"))
      .toMatchObject({ status: 400, body: { error: "Query field q must not contain a NUL character (\\u0000)" } })
    const json = { "content-type": "application/json" }
    expect(await rawPost("/api/auth/login", JSON.stringify({ email: `a${NUL}@b.test`, password: "x" }), json))
      .toMatchObject({ status: 400, body: { error: "email must not contain a NUL character (\\u0000)" } })
    expect(await rawPost("/api/auth/signup", JSON.stringify({ email: "n@b.test", password: `long enough${NUL}pw` }), json))
      .toMatchObject({ status: 400, body: { error: "password must not contain a NUL character (\\u0000)" } })
    expect(await rawPost("/api/auth/login", `{"email":"a@b.test","password":"\u0000"}`, json))
      .toMatchObject({ status: 400, body: { error: "Request body must not contain a NUL character (\\u0000)" } })
  })

  it("refuses JSON nested deeper than 32 levels before validating (5,000 levels used to overflow the stack)", async () => {
    const deep = `{"amountUsd":1,"productName":"x","metadata":${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}}`
    expect(await rawPost("/api/checkout/invoices", deep, { "content-type": "application/json", "x-api-key": merchant.apiKey }))
      .toMatchObject({ status: 400, body: { error: "Request body is nested too deeply (at most 32 levels)" } })
    const arrays = `[${"[".repeat(5000)}${"]".repeat(5000)}]`
    expect(await rawPost("/api/auth/login", arrays, { "content-type": "application/json" }))
      .toMatchObject({ status: 400, body: { error: "Request body is nested too deeply (at most 32 levels)" } })
  })

  it("void takes no body, {} or nothing else; a non-UTF-8 charset is refused; a 1000-digit simulated amount is a 400", async () => {
    const { body: a } = await create({ amountUsd: 5, productName: "T" })
    const bare = await publicRequest(app.baseUrl, `/api/checkout/invoices/${a.id}/void`, { method: "POST", headers: { "x-api-key": merchant.apiKey } })
    expect(bare).toMatchObject({ status: 200, body: { status: "voided" } })
    const { body: b } = await create({ amountUsd: 5, productName: "T" })
    expect(await merchant.api(`/api/checkout/invoices/${b.id}/void`, { body: [] }))
      .toMatchObject({ status: 400, body: { error: "Request body must be a JSON object" } })

    const utf16 = Uint8Array.from(Buffer.from(JSON.stringify({ amountUsd: 5, productName: "T" }), "utf16le"))
    expect(await rawPost("/api/checkout/invoices", utf16, { "content-type": "application/json; charset=utf-16", "x-api-key": merchant.apiKey }))
      .toMatchObject({ status: 400, body: { error: "Content-Type charset must be utf-8 (got utf-16)" } })
    const utf8 = await rawPost("/api/checkout/invoices", JSON.stringify({ amountUsd: 5, productName: "T" }), {
      "content-type": "application/json; charset=UTF-8",
      "x-api-key": merchant.apiKey
    })
    expect(utf8.status).toBe(201)

    const option = b.paymentOptions[0]
    const huge = await merchant.dashboard(`/api/dev/invoices/${utf8.body.id}/simulate-payment`, {
      body: { paymentOptionId: utf8.body.paymentOptions[0].id ?? option.id, amount: "9".repeat(1000) }
    })
    expect(huge.status).toBe(400)
    expect(huge.body.error).toMatch(/^amount must be a decimal string/)
  })
})
