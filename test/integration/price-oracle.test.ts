import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import type { OptionJson } from "../support/Answers.ts"

/** A real HTTP price source on loopback whose answer each test sets. */
let answer: { status: number; body: unknown; delayMs?: number } = { status: 200, body: {} }
let requests = 0
let server: Server
let sourceUrl: string

beforeAll(async () => {
  server = createServer((_request, response) => {
    requests++
    setTimeout(() => {
      response.writeHead(answer.status, { "content-type": "application/json" })
      response.end(JSON.stringify(answer.body))
    }, answer.delayMs ?? 0)
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  sourceUrl = `http://127.0.0.1:${address.port}/simple/price`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

// 1.5 s: the single-flight test's 200 ms answer exceeded a 300 ms time-out once on a loaded machine.
const withApp = async (use: (app: TestApp) => Promise<void>) => {
  const base = parseConfig({ CHECKOUT_ENV: "test" })
  const app = await startTestApp({ price: { ...base.price, url: sourceUrl, timeoutMs: 1_500 } })
  try {
    await use(app)
  } finally {
    await app.close()
  }
}

const fresh = (usd: unknown) => ({ bitcoin: { usd, last_updated_at: Math.floor(Date.now() / 1000) } })

describe("HTTP price oracle", () => {
  it("fetches once for concurrent requests that find the cache empty (single flight)", async () => {
    await withApp(async (app) => {
      answer = { status: 200, body: fresh(60_000), delayMs: 200 }
      requests = 0
      const merchant = await app.createMerchant()
      const created = await Promise.all(Array.from({ length: 8 }, () => merchant.api("/api/checkout/invoices", { body: { amountUsd: 6 } })))
      expect(created.map((response) => response.status)).toEqual(Array(8).fill(201))
      for (const response of created) {
        expect(response.body.paymentOptions.find((option: OptionJson) => option.network === "bitcoin").quoteRate).toBe(60_000)
      }
      expect(requests).toBe(1)
    })
  })

  it("quotes BTC at the source's price, rounded up, and caches it", async () => {
    await withApp(async (app) => {
      answer = { status: 200, body: fresh(50_000) }
      requests = 0
      const merchant = await app.createMerchant()
      const { status, body } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(status).toBe(201)
      const bitcoin = body.paymentOptions.find((option: OptionJson) => option.network === "bitcoin")
      expect(bitcoin).toMatchObject({ quoteRate: 50_000, quotedAmount: 0.002 })
      const usdc = body.paymentOptions.find((option: OptionJson) => option.network === "base")
      expect(usdc).toMatchObject({ quoteRate: 1, quotedAmount: 100 })
      answer = { status: 200, body: fresh("65432.1") }
      const second = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 1 } })
      expect(second.body.paymentOptions.find((option: OptionJson) => option.network === "bitcoin").quoteRate).toBe(50_000)
      expect(requests).toBe(1)
    })
  })

  for (const [name, failing, expected] of [
    ["is stale", { status: 200, body: { bitcoin: { usd: 50_000, last_updated_at: Math.floor(Date.now() / 1000) - 3600 } } }, 502],
    ["fails", { status: 500, body: { error: "down" } }, 502],
    ["answers no price", { status: 200, body: { bitcoin: {} } }, 502],
    ["hangs past the time-out", { status: 200, body: fresh(50_000), delayMs: 5_000 }, 502]
  ] as const) {
    it(`answers 502 when the source ${name}`, async () => {
      await withApp(async (app) => {
        answer = failing
        const merchant = await app.createMerchant()
        const started = Date.now()
        const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
        expect(response.status).toBe(expected)
        expect(response.body).toEqual({ error: "The BTC price source is unavailable" })
        expect(Date.now() - started).toBeLessThan(1_800)
        const stablecoinOnly = await app.createMerchant({
          methods: [{ network: "base", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: true, recipientAddress: null,
            xpub: "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt" }]
        })
        expect((await stablecoinOnly.api("/api/checkout/invoices", { body: { amountUsd: 100 } })).status).toBe(201)
      })
    })
  }
})
