import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { request } from "undici"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { chooseEncoding } from "../../src/http/Compression.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp
let merchant: TestMerchant
let invoiceId: string

beforeAll(async () => {
  app = await startTestApp()
  merchant = await app.createMerchant()
  invoiceId = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 12 } })).body.id
}, 120_000)

afterAll(async () => {
  await app?.close()
})

const raw = async (path: string, acceptEncoding?: string) => {
  const response = await request(`${app.baseUrl}${path}`, {
    headers: { ...(acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding }), "x-api-key": merchant.apiKey }
  })
  return { status: response.statusCode, headers: response.headers, bytes: Buffer.from(await response.body.arrayBuffer()) }
}

describe("response compression", () => {
  it("answers brotli or gzip when the client accepts it, with the same JSON, and plain otherwise", async () => {
    const plain = await raw(`/api/checkout/pay/${invoiceId}`)
    expect(plain.headers["content-encoding"]).toBeUndefined()
    const json = JSON.parse(plain.bytes.toString("utf8"))
    expect(plain.bytes.length).toBeGreaterThan(2_000)

    const br = await raw(`/api/checkout/pay/${invoiceId}`, "gzip, deflate, br")
    expect(br.headers["content-encoding"]).toBe("br")
    expect(br.headers["vary"]).toContain("accept-encoding")
    expect(br.bytes.length).toBeLessThan(plain.bytes.length / 2)
    expect(JSON.parse(brotliDecompressSync(br.bytes).toString("utf8"))).toEqual(json)

    const gzip = await raw(`/api/checkout/invoices/${invoiceId}`, "gzip")
    expect(gzip.headers["content-encoding"]).toBe("gzip")
    expect(JSON.parse(gunzipSync(gzip.bytes).toString("utf8")).id).toBe(invoiceId)

    const refused = await raw(`/api/checkout/pay/${invoiceId}`, "br;q=0, gzip;q=0")
    expect(refused.headers["content-encoding"]).toBeUndefined()
  })

  it("leaves small bodies alone", async () => {
    const small = await raw("/api/health", "br")
    expect(small.status).toBe(200)
    expect(small.headers["content-encoding"]).toBeUndefined()
  })

  it("reads Accept-Encoding with its q-values", () => {
    expect(chooseEncoding(undefined)).toBeUndefined()
    expect(chooseEncoding("gzip, deflate, br")).toBe("br")
    expect(chooseEncoding("gzip")).toBe("gzip")
    expect(chooseEncoding("br;q=0, gzip")).toBe("gzip")
    expect(chooseEncoding("*")).toBe("br")
    expect(chooseEncoding("identity")).toBeUndefined()
  })
})
