import { brotliDecompressSync, gunzipSync } from "node:zlib"
import { expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { request } from "undici"
import { chooseEncoding } from "../../src/http/Compression.ts"
import { SuiteMerchant, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

/** The suite's invoice (of the suite's merchant), created when the suite's layer is built. */
class SuiteInvoice extends Context.Service<SuiteInvoice, { readonly id: string }>()("test/SuiteInvoice") {
  static readonly layer = Layer.effect(
    SuiteInvoice,
    Effect.flatMap(SuiteMerchant, (merchant) => Effect.map(merchant.api("/api/checkout/invoices", { body: { amountUsd: 12 } }), (created) => ({ id: created.body.id as string })))
  )
}

const raw = (path: string, acceptEncoding?: string) =>
  Effect.gen(function*() {
    const { baseUrl } = yield* TestServer
    const merchant = yield* SuiteMerchant
    return yield* Effect.promise(async () => {
      const response = await request(`${baseUrl}${path}`, {
        headers: { ...(acceptEncoding === undefined ? {} : { "accept-encoding": acceptEncoding }), "x-api-key": merchant.apiKey }
      })
      return { status: response.statusCode, headers: response.headers, bytes: Buffer.from(await response.body.arrayBuffer()) }
    })
  })

it.layer(SuiteInvoice.layer.pipe(Layer.provideMerge(SuiteMerchant.layer()), Layer.provideMerge(testApp())), suiteOptions)("response compression", (it) => {
  it.effect("answers brotli or gzip when the client accepts it, with the same JSON, and plain otherwise", () =>
    Effect.gen(function*() {
      const { id: invoiceId } = yield* SuiteInvoice
      const plain = yield* raw(`/api/checkout/pay/${invoiceId}`)
      expect(plain.headers["content-encoding"]).toBeUndefined()
      const json = JSON.parse(plain.bytes.toString("utf8"))
      expect(plain.bytes.length).toBeGreaterThan(2_000)

      const br = yield* raw(`/api/checkout/pay/${invoiceId}`, "gzip, deflate, br")
      expect(br.headers["content-encoding"]).toBe("br")
      expect(br.headers["vary"]).toContain("accept-encoding")
      expect(br.bytes.length).toBeLessThan(plain.bytes.length / 2)
      expect(JSON.parse(brotliDecompressSync(br.bytes).toString("utf8"))).toEqual(json)

      const gzip = yield* raw(`/api/checkout/invoices/${invoiceId}`, "gzip")
      expect(gzip.headers["content-encoding"]).toBe("gzip")
      expect(JSON.parse(gunzipSync(gzip.bytes).toString("utf8")).id).toBe(invoiceId)

      const refused = yield* raw(`/api/checkout/pay/${invoiceId}`, "br;q=0, gzip;q=0")
      expect(refused.headers["content-encoding"]).toBeUndefined()
    }))

  it.effect("leaves small bodies alone", () =>
    Effect.gen(function*() {
      const small = yield* raw("/api/health", "br")
      expect(small.status).toBe(200)
      expect(small.headers["content-encoding"]).toBeUndefined()
    }))

  it("reads Accept-Encoding with its q-values", () => {
    expect(chooseEncoding(undefined)).toBeUndefined()
    expect(chooseEncoding("gzip, deflate, br")).toBe("br")
    expect(chooseEncoding("gzip")).toBe("gzip")
    expect(chooseEncoding("br;q=0, gzip")).toBe("gzip")
    expect(chooseEncoding("*")).toBe("br")
    expect(chooseEncoding("identity")).toBeUndefined()
  })
})
