import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

/**
 * Bytes that are not UTF-8 in a JSON body, and paths that do not decode or carry over-long ids,
 * are refused with 400 before any route sees them (they were stored as U+FFFD, or answered 404/403).
 */

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const concat = (...parts: Array<Uint8Array>): Uint8Array<ArrayBuffer> => {
  const out = new Uint8Array(parts.reduce((sum, part) => sum + part.length, 0))
  let at = 0
  for (const part of parts) {
    out.set(part, at)
    at += part.length
  }
  return out
}
const utf8 = (text: string) => new TextEncoder().encode(text)
const createRaw = (body: Uint8Array<ArrayBuffer>) =>
  publicRequest(app.baseUrl, "/api/checkout/invoices", { method: "POST", headers: { "content-type": "application/json", "x-api-key": merchant.apiKey }, body })
const invoiceCount = async () => {
  const list = await merchant.dashboard("/api/dashboard/invoices?limit=200")
  return (list.body.invoices as Array<unknown>).length
}

describe("JSON bodies that are not UTF-8", () => {
  it("are refused with 400 and nothing is stored", async () => {
    const before = await invoiceCount()
    for (const bad of [[0xff], [0xc3], [0xe0, 0xa4], [0xed, 0xa0, 0x80], [0xc0, 0xaf]]) {
      const body = concat(utf8(`{"amountUsd":5,"productName":"T`), new Uint8Array(bad), utf8(`"}`))
      expect(await createRaw(body)).toMatchObject({ status: 400, body: { error: "Request body must be valid UTF-8" } })
    }
    const login = await publicRequest(app.baseUrl, "/api/auth/login", {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: concat(utf8(`{"email":"a@b.test","password":"`), new Uint8Array([0xfe]), utf8(`"}`))
    })
    expect(login).toMatchObject({ status: 400, body: { error: "Request body must be valid UTF-8" } })
    expect(await invoiceCount()).toBe(before)
  })

  it("valid multi-byte UTF-8 is stored as sent", async () => {
    const created = await createRaw(utf8(`{"amountUsd":5,"productName":"Café \u{1F600} 中"}`))
    expect(created.status).toBe(201)
    expect(created.body.productName).toBe("Café \u{1F600} 中")
  })
})

describe("paths", () => {
  const badPaths = ["/api/checkout/invoices/%E0%A4%A", "/api/checkout/invoices/%ZZ/status", `/api/checkout/invoices/${"a".repeat(101)}`,
    `/api/checkout/invoices/${crypto.randomUUID()}${"0".repeat(80)}/status`]

  it("with bad percent-encoding or an id over 100 characters: 400, with or without an API key", async () => {
    for (const path of badPaths) {
      const expected = path.includes("%") ? "Request path must be valid percent-encoded UTF-8" : "Request path segments (ids) must be at most 100 characters"
      expect(await merchant.api(path)).toMatchObject({ status: 400, body: { error: expected } })
      expect(await publicRequest(app.baseUrl, path)).toMatchObject({ status: 400, body: { error: expected } })
      expect(await merchant.dashboard(path)).toMatchObject({ status: 400, body: { error: expected } })
    }
    expect(await publicRequest(app.baseUrl, "/api/checkout/pay/%E0%A4%A/status")).toMatchObject({ status: 400 })
    expect(await publicRequest(app.baseUrl, `/api/checkout/pay/${"x".repeat(200)}/status`)).toMatchObject({ status: 400 })
  })

  it("well-formed: an unknown route is still 404, and 403 for an API key; a malformed id is 400", async () => {
    expect(await publicRequest(app.baseUrl, "/api/no-such-route/abc")).toMatchObject({ status: 404, body: { error: "Not found" } })
    expect(await merchant.api("/api/no-such-route/abc")).toMatchObject({ status: 403, body: { error: "API keys can access only the checkout invoice endpoints" } })
    expect(await merchant.api("/api/checkout/invoices/%E2%82%AC")).toMatchObject({ status: 400, body: { error: "id must be a valid UUID" } })
    expect(await merchant.api(`/api/checkout/invoices/${"a".repeat(100)}`)).toMatchObject({ status: 400, body: { error: "id must be a valid UUID" } })
  })
})
