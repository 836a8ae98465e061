import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { publicRequest, SuiteMerchant, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

const NUL = "\u0000"
const LONE = "\ud800"
const countInvoices = () =>
  Effect.gen(function*() {
    const merchant = yield* SuiteMerchant
    const sql = yield* SqlClient.SqlClient
    const rows = yield* sql<{ count: number }>`SELECT count(*)::int AS count FROM invoices WHERE merchant_id = ${merchant.merchantId}`
    return rows[0].count
  })
const create = (body: unknown) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.api("/api/checkout/invoices", { body }))
const request = (path: string, init: RequestInit) => Effect.flatMap(TestServer, (server) => Effect.promise(() => publicRequest(server.baseUrl, path, init)))
const rawPost = (path: string, body: BodyInit, headers: Record<string, string>) => request(path, { method: "POST", body, headers })

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("hostile input is refused at the edge with 400, never 500 or 502", () => {
    it.effect("refuses a NUL in any create field, metadata key or value, and stores nothing", () =>
      Effect.gen(function*() {
        const before = yield* countInvoices()
        const cases: ReadonlyArray<[unknown, string]> = [
          [{ amountUsd: 5, productName: `T${NUL}shirt` }, "productName must not contain a NUL character (\\u0000)"],
          [{ amountUsd: 5, productName: "T", issuedBy: `Shop${NUL}` }, "issuedBy must not contain a NUL character (\\u0000)"],
          [{ amountUsd: 5, productName: "T", metadata: { [`k${NUL}`]: "v" } }, "A field name in metadata must not contain a NUL character (\\u0000)"],
          [{ amountUsd: 5, productName: "T", metadata: { order: `1${NUL}` } }, "metadata.order must not contain a NUL character (\\u0000)"]
        ]
        for (const [body, error] of cases) {
          expect(yield* create(body)).toMatchObject({ status: 400, body: { error } })
        }
        expect(yield* countInvoices()).toBe(before)
      }))

    it.effect("refuses an unpaired surrogate in metadata and issuedBy (no 'backend unavailable' 502), and keeps a proper pair", () =>
      Effect.gen(function*() {
        expect(yield* create({ amountUsd: 5, productName: "T", metadata: { note: `a${LONE}` } })).toMatchObject({
          status: 400,
          body: { error: "metadata.note must be valid Unicode text (it contains an unpaired surrogate)" }
        })
        expect(yield* create({ amountUsd: 5, productName: "T", issuedBy: `x${LONE}` })).toMatchObject({
          status: 400,
          body: { error: "issuedBy must be valid Unicode text (it contains an unpaired surrogate)" }
        })
        const emoji = yield* create({ amountUsd: 5, productName: "T \ud83d\ude00" })
        expect(emoji.status).toBe(201)
        expect(emoji.body.productName).toBe("T \ud83d\ude00")
      }))

    it.effect("refuses NULs in notes, webhook URL, delivery search, and in the unauthenticated login and sign-up", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const { body: invoice } = yield* create({ amountUsd: 5, productName: "T" })
        expect(yield* merchant.api(`/api/checkout/invoices/${invoice.id}/record-payment`, { body: { note: `wire${NUL}` } }))
          .toMatchObject({ status: 400, body: { error: "note must not contain a NUL character (\\u0000)" } })
        expect(yield* merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: `https://shop.example/h${NUL}` } }))
          .toMatchObject({ status: 400, body: { error: "url must not contain a NUL character (\\u0000)" } })
        expect(yield* merchant.dashboard("/api/dashboard/webhook-deliveries?q=a%00b"))
          .toMatchObject({ status: 400, body: { error: "Query field q must not contain a NUL character (\\u0000)" } })
        const json = { "content-type": "application/json" }
        expect(yield* rawPost("/api/auth/login", JSON.stringify({ email: `a${NUL}@b.test`, password: "x" }), json))
          .toMatchObject({ status: 400, body: { error: "email must not contain a NUL character (\\u0000)" } })
        expect(yield* rawPost("/api/auth/signup", JSON.stringify({ email: "n@b.test", password: `long enough${NUL}pw` }), json))
          .toMatchObject({ status: 400, body: { error: "password must not contain a NUL character (\\u0000)" } })
        expect(yield* rawPost("/api/auth/login", `{"email":"a@b.test","password":"\u0000"}`, json))
          .toMatchObject({ status: 400, body: { error: "Request body must not contain a NUL character (\\u0000)" } })
      }))

    it.effect("refuses JSON nested deeper than 32 levels before validating (5,000 levels used to overflow the stack)", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const deep = `{"amountUsd":1,"productName":"x","metadata":${"{\"a\":".repeat(5000)}1${"}".repeat(5000)}}`
        expect(yield* rawPost("/api/checkout/invoices", deep, { "content-type": "application/json", "x-api-key": merchant.apiKey }))
          .toMatchObject({ status: 400, body: { error: "Request body is nested too deeply (at most 32 levels)" } })
        const arrays = `[${"[".repeat(5000)}${"]".repeat(5000)}]`
        expect(yield* rawPost("/api/auth/login", arrays, { "content-type": "application/json" }))
          .toMatchObject({ status: 400, body: { error: "Request body is nested too deeply (at most 32 levels)" } })
      }))

    it.effect("void takes no body, {} or nothing else; a non-UTF-8 charset is refused; a 1000-digit simulated amount is a 400", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const { body: a } = yield* create({ amountUsd: 5, productName: "T" })
        const bare = yield* request(`/api/checkout/invoices/${a.id}/void`, { method: "POST", headers: { "x-api-key": merchant.apiKey } })
        expect(bare).toMatchObject({ status: 200, body: { status: "voided" } })
        const { body: b } = yield* create({ amountUsd: 5, productName: "T" })
        expect(yield* merchant.api(`/api/checkout/invoices/${b.id}/void`, { body: [] }))
          .toMatchObject({ status: 400, body: { error: "Request body must be a JSON object" } })

        const utf16 = Uint8Array.from(Buffer.from(JSON.stringify({ amountUsd: 5, productName: "T" }), "utf16le"))
        expect(yield* rawPost("/api/checkout/invoices", utf16, { "content-type": "application/json; charset=utf-16", "x-api-key": merchant.apiKey }))
          .toMatchObject({ status: 400, body: { error: "Content-Type charset must be utf-8 (got utf-16)" } })
        const utf8 = yield* rawPost("/api/checkout/invoices", JSON.stringify({ amountUsd: 5, productName: "T" }), {
          "content-type": "application/json; charset=UTF-8",
          "x-api-key": merchant.apiKey
        })
        expect(utf8.status).toBe(201)

        const option = b.paymentOptions[0]
        const huge = yield* merchant.dashboard(`/api/dev/invoices/${utf8.body.id}/simulate-payment`, {
          body: { paymentOptionId: utf8.body.paymentOptions[0].id ?? option.id, amount: "9".repeat(1000) }
        })
        expect(huge.status).toBe(400)
        expect(huge.body.error).toMatch(/^amount must be a decimal string/)
      }))
  })
})
