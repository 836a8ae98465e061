import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { csvField } from "../../src/invoices/InvoiceCsv.ts"
import { type Merchant, publicRequest, SuiteMerchant, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

const create = (who: Merchant, body: Record<string, unknown>) =>
  Effect.gen(function*() {
    const created = yield* who.api("/api/checkout/invoices", { body: { productName: "Tea", ...body } })
    expect(created.status).toBe(201)
    return created.body as { id: string; paymentOptions: Array<{ id: string; network: string; quotedAmount: number }> }
  })

/** Another account of the same service. */
const anotherMerchant = Effect.flatMap(TestServer, (server) => server.createMerchant())

/** A request outside the merchant helpers (raw headers, or the CSV text). */
const fetchText = (path: string, init: RequestInit) =>
  Effect.flatMap(TestServer, (server) =>
    Effect.promise(async () => {
      const response = await fetch(`${server.baseUrl}${path}`, init)
      return { status: response.status, headers: response.headers, text: await response.text() }
    }))

/** Parses RFC 4180 text (quoted fields, doubled quotes, CRLF rows). */
const parseCsv = (text: string): Array<Array<string>> => {
  const rows: Array<Array<string>> = []
  let row: Array<string> = []
  let field = ""
  let quoted = false
  for (let i = 0; i < text.length; i++) {
    const c = text[i]
    if (quoted) {
      if (c === "\"" && text[i + 1] === "\"") {
        field += "\""
        i++
      } else if (c === "\"") quoted = false
      else field += c
    } else if (c === "\"") quoted = true
    else if (c === ",") {
      row.push(field)
      field = ""
    } else if (c === "\r" && text[i + 1] === "\n") {
      row.push(field)
      rows.push(row)
      row = []
      field = ""
      i++
    } else field += c
  }
  return rows
}

it.layer(SuiteMerchant.layer().pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("the dashboard's invoice list, detail and CSV export", () => {
    it.effect("lists the calling account's invoices newest first, filters them and pages with a cursor", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const first = yield* create(merchant, { amountUsd: 10, merchantReference: "ORD-1001", customerEmail: "ann@shop.test" })
        const second = yield* create(merchant, { amountUsd: 20, merchantReference: "ORD-1002" })
        const third = yield* create(merchant, { amountUsd: 30, merchantReference: "WEB-7", customerEmail: "bob@shop.test" })
        const other = yield* anotherMerchant
        yield* create(other, { amountUsd: 40, merchantReference: "ORD-1001" })
        expect((yield* merchant.api(`/api/checkout/invoices/${second.id}/void`, { body: {} })).status).toBe(200)

        const all = yield* merchant.dashboard("/api/dashboard/invoices")
        expect(all.status).toBe(200)
        expect(all.body.invoices.map((invoice: { id: string }) => invoice.id)).toEqual([third.id, second.id, first.id])
        expect(all.body.invoices[0]).toMatchObject({ amountUsd: 30, status: "awaiting_payment", paymentCoverage: "no_payment", merchantReference: "WEB-7", paymentsSummary: "0" })

        const list = (query: string) =>
          Effect.map(merchant.dashboard(`/api/dashboard/invoices?${query}`), (answer) => answer.body.invoices.map((invoice: { id: string }) => invoice.id))
        expect(yield* list("status=voided")).toEqual([second.id])
        expect(yield* list("q=ORD-100")).toEqual([second.id, first.id])
        expect(yield* list("q=bob@")).toEqual([third.id])
        expect(yield* list(`q=${first.id.toUpperCase()}`)).toEqual([first.id])
        // The 8 characters the list shows for an invoice find it (a run of hex digits cannot reach a LIKE wildcard).
        expect(yield* list(`q=${third.id.slice(0, 8)}`)).toEqual([third.id])
        expect(yield* list(`q=${first.id.slice(0, 13).toUpperCase()}`)).toEqual([first.id])
        expect(yield* list("q=0000000_")).toEqual([])
        expect(yield* list(`createdTo=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&createdFrom=2020-01-01`)).toHaveLength(3)
        expect(yield* list("createdFrom=2999-01-01")).toEqual([])

        const pageOne = yield* merchant.dashboard("/api/dashboard/invoices?limit=2")
        expect(pageOne.body.invoices).toHaveLength(2)
        const pageTwo = yield* merchant.dashboard(`/api/dashboard/invoices?limit=2&cursor=${pageOne.body.nextCursor}`)
        expect(pageTwo.body.invoices.map((invoice: { id: string }) => invoice.id)).toEqual([first.id])
        expect(pageTwo.body.nextCursor).toBeNull()

        expect(yield* merchant.dashboard("/api/dashboard/invoices?status=paid")).toMatchObject({ status: 400,
          body: { error: expect.stringMatching(/^status must be one of awaiting_payment/) } })
        expect(yield* merchant.dashboard("/api/dashboard/invoices?cursor=nonsense")).toMatchObject({ status: 400, body: { error: "cursor is invalid" } })
        expect(yield* merchant.dashboard("/api/dashboard/invoices?createdFrom=yesterday")).toMatchObject({ status: 400 })
        expect((yield* Effect.flatMap(TestServer, (server) =>
          Effect.promise(() => publicRequest(server.baseUrl, "/api/dashboard/invoices", { headers: { "x-api-key": merchant.apiKey } })))).status).toBe(403)
      }))

    it.effect("shows one invoice with its payments, timeline and deliveries, and never another account's", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        const invoice = yield* create(merchant, { amountUsd: 12 })
        const option = invoice.paymentOptions.find((candidate) => candidate.network === "arbitrum")!
        const paid = yield* merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
          body: { paymentOptionId: option.id, amount: String(option.quotedAmount), confirmations: 100 }
        })
        expect(paid.status).toBe(200)
        const detail = yield* merchant.dashboard(`/api/dashboard/invoices/${invoice.id}`)
        expect(detail.status).toBe(200)
        expect(detail.body.invoice).toMatchObject({ id: invoice.id, status: "confirmed" })
        expect(detail.body.invoice.payments).toHaveLength(1)
        expect(detail.body.timeline.map((entry: { event: string }) => entry.event)).toEqual(expect.arrayContaining(["invoice_created", "invoice_confirmed"]))
        expect(detail.body.deliveries).toEqual([])
        const other = yield* anotherMerchant
        expect((yield* other.dashboard(`/api/dashboard/invoices/${invoice.id}`)).status).toBe(404)
      }))

    it.effect("exports the filtered invoices as RFC 4180 CSV with formula-safe cells", () =>
      Effect.gen(function*() {
        const fresh = yield* anotherMerchant
        const risky = yield* create(fresh, { amountUsd: 5, merchantReference: "=HYPERLINK(\"http://evil\",\"x\")", productName: "Mug, \"large\"" })
        yield* create(fresh, { amountUsd: 6, merchantReference: "plain" })
        const response = yield* fetchText("/api/dashboard/exports/invoices.csv?q=HYPERLINK", { headers: { authorization: `Bearer ${fresh.sessionToken}` } })
        expect(response.status).toBe(200)
        expect(response.headers.get("content-type")).toMatch(/^text\/csv/)
        expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="invoices-\d{4}-\d{2}-\d{2}\.csv"$/)
        const rows = parseCsv(response.text)
        expect(rows[0].slice(0, 4)).toEqual(["id", "createdAt", "status", "amountUsd"])
        expect(rows).toHaveLength(2)
        const record = Object.fromEntries(rows[0].map((name, index) => [name, rows[1][index]]))
        expect(record).toMatchObject({ id: risky.id, amountUsd: "5", status: "awaiting_payment", productName: "Mug, \"large\"",
          merchantReference: "'=HYPERLINK(\"http://evil\",\"x\")" })

        const everything = parseCsv((yield* fetchText("/api/dashboard/exports/invoices.csv", { headers: { authorization: `Bearer ${fresh.sessionToken}` } })).text)
        expect(everything).toHaveLength(3)
        expect(csvField("-1+1")).toBe("'-1+1")
        expect(csvField("@SUM(A1)")).toBe("'@SUM(A1)")
        expect(csvField(-5)).toBe("-5")
      }))
  })
})
