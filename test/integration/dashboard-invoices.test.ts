import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { csvField } from "../../src/invoices/InvoiceCsv.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp
let merchant: TestMerchant
let other: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
  other = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const create = async (who: TestMerchant, body: Record<string, unknown>) => {
  const created = await who.api("/api/checkout/invoices", { body: { productName: "Tea", ...body } })
  expect(created.status).toBe(201)
  return created.body as { id: string; paymentOptions: Array<{ id: string; network: string; quotedAmount: number }> }
}

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

describe("the dashboard's invoice list, detail and CSV export", () => {
  it("lists the calling account's invoices newest first, filters them and pages with a cursor", async () => {
    const first = await create(merchant, { amountUsd: 10, merchantReference: "ORD-1001", customerEmail: "ann@shop.test" })
    const second = await create(merchant, { amountUsd: 20, merchantReference: "ORD-1002" })
    const third = await create(merchant, { amountUsd: 30, merchantReference: "WEB-7", customerEmail: "bob@shop.test" })
    await create(other, { amountUsd: 40, merchantReference: "ORD-1001" })
    expect((await merchant.api(`/api/checkout/invoices/${second.id}/void`, { body: {} })).status).toBe(200)

    const all = await merchant.dashboard("/api/dashboard/invoices")
    expect(all.status).toBe(200)
    expect(all.body.invoices.map((invoice: { id: string }) => invoice.id)).toEqual([third.id, second.id, first.id])
    expect(all.body.invoices[0]).toMatchObject({ amountUsd: 30, status: "awaiting_payment", paymentCoverage: "no_payment", merchantReference: "WEB-7", paymentsSummary: "0" })

    const list = async (query: string) => (await merchant.dashboard(`/api/dashboard/invoices?${query}`)).body.invoices.map((invoice: { id: string }) => invoice.id)
    expect(await list("status=voided")).toEqual([second.id])
    expect(await list("q=ORD-100")).toEqual([second.id, first.id])
    expect(await list("q=bob@")).toEqual([third.id])
    expect(await list(`q=${first.id.toUpperCase()}`)).toEqual([first.id])
    expect(await list(`createdTo=${encodeURIComponent(new Date(Date.now() + 60_000).toISOString())}&createdFrom=2020-01-01`)).toHaveLength(3)
    expect(await list("createdFrom=2999-01-01")).toEqual([])

    const pageOne = await merchant.dashboard("/api/dashboard/invoices?limit=2")
    expect(pageOne.body.invoices).toHaveLength(2)
    const pageTwo = await merchant.dashboard(`/api/dashboard/invoices?limit=2&cursor=${pageOne.body.nextCursor}`)
    expect(pageTwo.body.invoices.map((invoice: { id: string }) => invoice.id)).toEqual([first.id])
    expect(pageTwo.body.nextCursor).toBeNull()

    expect(await merchant.dashboard("/api/dashboard/invoices?status=paid")).toMatchObject({ status: 400, body: { error: expect.stringMatching(/^status must be one of awaiting_payment/) } })
    expect(await merchant.dashboard("/api/dashboard/invoices?cursor=nonsense")).toMatchObject({ status: 400, body: { error: "cursor is invalid" } })
    expect(await merchant.dashboard("/api/dashboard/invoices?createdFrom=yesterday")).toMatchObject({ status: 400 })
    expect((await publicRequest(app.baseUrl, "/api/dashboard/invoices", { headers: { "x-api-key": merchant.apiKey } })).status).toBe(403)
  })

  it("shows one invoice with its payments, timeline and deliveries, and never another account's", async () => {
    const invoice = await create(merchant, { amountUsd: 12 })
    const option = invoice.paymentOptions.find((candidate) => candidate.network === "arbitrum")!
    const paid = await merchant.dashboard(`/api/dev/invoices/${invoice.id}/simulate-payment`, {
      body: { paymentOptionId: option.id, amount: String(option.quotedAmount), confirmations: 100 }
    })
    expect(paid.status).toBe(200)
    const detail = await merchant.dashboard(`/api/dashboard/invoices/${invoice.id}`)
    expect(detail.status).toBe(200)
    expect(detail.body.invoice).toMatchObject({ id: invoice.id, status: "confirmed" })
    expect(detail.body.invoice.payments).toHaveLength(1)
    expect(detail.body.timeline.map((entry: { event: string }) => entry.event)).toEqual(expect.arrayContaining(["invoice_created", "invoice_confirmed"]))
    expect(detail.body.deliveries).toEqual([])
    expect((await other.dashboard(`/api/dashboard/invoices/${invoice.id}`)).status).toBe(404)
  })

  it("exports the filtered invoices as RFC 4180 CSV with formula-safe cells", async () => {
    const fresh = await app.createMerchant()
    const risky = await create(fresh, { amountUsd: 5, merchantReference: "=HYPERLINK(\"http://evil\",\"x\")", productName: "Mug, \"large\"" })
    await create(fresh, { amountUsd: 6, merchantReference: "plain" })
    const response = await fetch(`${app.baseUrl}/api/dashboard/exports/invoices.csv?q=HYPERLINK`, { headers: { authorization: `Bearer ${fresh.sessionToken}` } })
    expect(response.status).toBe(200)
    expect(response.headers.get("content-type")).toMatch(/^text\/csv/)
    expect(response.headers.get("content-disposition")).toMatch(/^attachment; filename="invoices-\d{4}-\d{2}-\d{2}\.csv"$/)
    const rows = parseCsv(await response.text())
    expect(rows[0].slice(0, 4)).toEqual(["id", "createdAt", "status", "amountUsd"])
    expect(rows).toHaveLength(2)
    const record = Object.fromEntries(rows[0].map((name, index) => [name, rows[1][index]]))
    expect(record).toMatchObject({ id: risky.id, amountUsd: "5", status: "awaiting_payment", productName: "Mug, \"large\"", merchantReference: "'=HYPERLINK(\"http://evil\",\"x\")" })

    const everything = parseCsv(await (await fetch(`${app.baseUrl}/api/dashboard/exports/invoices.csv`, { headers: { authorization: `Bearer ${fresh.sessionToken}` } })).text())
    expect(everything).toHaveLength(3)
    expect(csvField("-1+1")).toBe("'-1+1")
    expect(csvField("@SUM(A1)")).toBe("'@SUM(A1)")
    expect(csvField(-5)).toBe("-5")
  })
})
