import { createServer, type Server } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import type { OptionJson, QuoteJson } from "../support/Answers.ts"
import type { JsonBody } from "../support/Json.ts"

/**
 * Several real HTTP price sources on loopback, each answering what its test sets: a fresh price,
 * a stale one (old timestamp), a lie (far from the others), 429, or nothing at all (a hang).
 */
type Behaviour =
  | { readonly kind: "fresh"; readonly usd: number | string }
  | { readonly kind: "stale"; readonly usd: number }
  | { readonly kind: "status"; readonly status: number }
  | { readonly kind: "hang" }

const SOURCES = 4
const behaviours: Array<Behaviour> = []
const requests: Array<number> = []
const servers: Array<Server> = []
const urls: Array<string> = []

const now = () => Math.floor(Date.now() / 1000)

beforeAll(async () => {
  for (let index = 0; index < SOURCES; index++) {
    const server = createServer((_request, response) => {
      requests[index]++
      const behaviour = behaviours[index]
      if (behaviour.kind === "hang") return // never answers: only the time-out ends the request
      if (behaviour.kind === "status") {
        response.writeHead(behaviour.status, { "content-type": "application/json" })
        return response.end(JSON.stringify({ error: "slow down" }))
      }
      const stamp = behaviour.kind === "stale" ? now() - 3_600 : now()
      response.writeHead(200, { "content-type": "application/json" })
      response.end(JSON.stringify({ price: { usd: behaviour.usd, at: stamp } }))
    })
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
    const address = server.address()
    if (address === null || typeof address === "string") throw new Error("no port")
    servers.push(server)
    urls.push(`http://127.0.0.1:${address.port}/ticker`)
  }
})
afterAll(async () => {
  for (const server of servers) {
    server.closeAllConnections()
    await new Promise((resolve) => server.close(resolve))
  }
})

/** `url|jsonPath|timestampPath` of the first `count` sources. */
const sourceList = (count: number) => urls.slice(0, count).map((url) => `${url}|price.usd|price.at`).join(",")
const hostOf = (index: number) => new URL(urls[index]).host

const withSources = async (set: ReadonlyArray<Behaviour>, env: Record<string, string>, use: (app: TestApp) => Promise<void>) => {
  behaviours.splice(0, behaviours.length, ...set)
  requests.splice(0, requests.length, ...Array(SOURCES).fill(0))
  const app = await startTestApp({}, { CHECKOUT_PRICE_URLS: sourceList(set.length), CHECKOUT_PRICE_TIMEOUT_MS: "300", ...env })
  try {
    await use(app)
  } finally {
    await app.close()
  }
}

const bitcoinOption = (body: JsonBody) => body.paymentOptions.find((option: OptionJson) => option.network === "bitcoin")

// Each test starts its own app: on a busy machine that alone can take longer than the default 30 s.
describe("several BTC price sources", { timeout: 180_000 }, () => {
  it("quotes the median of the answers and records the sources and their spread on the dashboard", async () => {
    // A quorum of 3: every answer is waited for (with 2, the first two to agree would decide).
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "fresh", usd: "60300.5" }, { kind: "fresh", usd: 60_100 }], { CHECKOUT_PRICE_QUORUM: "3" }, async (app) => {
      const merchant = await app.createMerchant()
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(created.status).toBe(201)
      expect(bitcoinOption(created.body).quoteRate).toBe(60_100)
      expect(requests).toEqual([1, 1, 1, 0])
      const detail = await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}`)
      expect(detail.status).toBe(200)
      const btc = detail.body.quotes.find((quote: QuoteJson) => quote.assetCode === "BTC")
      // (60300.5 − 60000) / 60100 = 0.5% exactly.
      expect(btc).toMatchObject({ rateUsd: "60100", basis: "sources", spread: "0.5%", leftOut: [] })
      expect(btc.sources.map((source: QuoteJson["sources"][number]) => [source.source, source.priceUsd])).toEqual([
        [hostOf(0), "60000"],
        [hostOf(1), "60300.5"],
        [hostOf(2), "60100"]
      ])
      expect(detail.body.quotes.find((quote: QuoteJson) => quote.assetCode === "USDC")).toMatchObject({ rateUsd: "1", basis: "par", sources: [] })
    })
  })

  it("leaves a stale source out instead of averaging it in (and names it on the dashboard)", async () => {
    // Averaged in, 50 000 would spread the answers far past 1%: the quote would be refused. The
    // two fresh answers agreeing decide the quote, whether the stale one had answered by then or not.
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "stale", usd: 50_000 }, { kind: "fresh", usd: 60_200 }], {}, async (app) => {
      const merchant = await app.createMerchant()
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(created.status).toBe(201)
      // The median of two answers is their mean.
      expect(bitcoinOption(created.body).quoteRate).toBe(60_100)
      const detail = await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}`)
      const btc = detail.body.quotes.find((quote: QuoteJson) => quote.assetCode === "BTC")
      expect(btc.sources.map((source: QuoteJson["sources"][number]) => source.source)).toEqual([hostOf(0), hostOf(2)])
      expect(btc.leftOut).toEqual([{ source: hostOf(1), reason: expect.stringMatching(/^stale|^not waited for/) }])
    })
  })

  it("does not count a stale answer towards the quorum", async () => {
    // Counted, 50 000 against 60 000 would be a disagreement; left out, one source answered of the two needed.
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "stale", usd: 50_000 }], {}, async (app) => {
      const merchant = await app.createMerchant()
      expect(await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })).toMatchObject({
        status: 502,
        body: { error: "The BTC price source is unavailable" }
      })
    })
  })

  it("leaves out a lying source (beyond the maximum deviation from the median of the others) and quotes the agreeing ones", async () => {
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "fresh", usd: 60_100 }, { kind: "fresh", usd: 90_000 }], {}, async (app) => {
      const merchant = await app.createMerchant()
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(created.status).toBe(201)
      expect(bitcoinOption(created.body).quoteRate).toBe(60_050)
      const detail = await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}`)
      const btc = detail.body.quotes.find((quote: QuoteJson) => quote.assetCode === "BTC")
      expect(btc.sources.map((source: QuoteJson["sources"][number]) => source.source)).toEqual([hostOf(0), hostOf(1)])
      // Left out as an outlier when it answered before the two others agreed, else not waited for.
      expect(btc.leftOut).toEqual([
        expect.objectContaining({ source: hostOf(2), reason: expect.stringMatching(/from the median of the others|^not waited for/) })
      ])
    })
  })

  it("refuses the quote (502 \"The BTC price sources disagree\") when no quorum of sources agrees", async () => {
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "fresh", usd: 63_000 }, { kind: "fresh", usd: 66_000 }], {}, async (app) => {
      const merchant = await app.createMerchant()
      const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(response.status).toBe(502)
      expect(response.body).toEqual({ error: "The BTC price sources disagree" })
    })
  })

  it("quotes answers within a wider CHECKOUT_PRICE_MAX_DEVIATION", async () => {
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "fresh", usd: 61_000 }], { CHECKOUT_PRICE_MAX_DEVIATION: "0.02" }, async (app) => {
      const merchant = await app.createMerchant()
      const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(response.status).toBe(201)
      expect(bitcoinOption(response.body).quoteRate).toBe(60_500)
    })
  })

  it("enforces the quorum with 502 when sources answer 429 or hang, the hang bounded by the time-out", async () => {
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "status", status: 429 }, { kind: "hang" }], {}, async (app) => {
      const merchant = await app.createMerchant()
      const started = Date.now()
      const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(response.status).toBe(502)
      expect(response.body).toEqual({ error: "The BTC price source is unavailable" })
      // The hanging source never answers; only the 300 ms time-out (sources asked in parallel) ends the quote.
      expect(Date.now() - started).toBeLessThan(5_000)
      expect(requests).toEqual([1, 1, 1, 0])
    })
  })

  it("quotes with a quorum of 1, recording why the others were left out", async () => {
    // The 429 may answer before or after the fresh source decides the quote; the hanging one never does.
    await withSources([{ kind: "status", status: 429 }, { kind: "hang" }, { kind: "fresh", usd: 60_000 }], { CHECKOUT_PRICE_QUORUM: "1", CHECKOUT_PRICE_TIMEOUT_MS: "60000" },
      async (app) => {
        const merchant = await app.createMerchant()
        const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
        expect(created.status).toBe(201)
        expect(bitcoinOption(created.body).quoteRate).toBe(60_000)
        const detail = await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}`)
        const btc = detail.body.quotes.find((quote: QuoteJson) => quote.assetCode === "BTC")
        expect(btc.sources.map((source: QuoteJson["sources"][number]) => source.source)).toEqual([hostOf(2)])
        expect(btc.leftOut).toEqual([
          { source: hostOf(0), reason: expect.stringMatching(/^answered 429$|^not waited for/) },
          { source: hostOf(1), reason: "not waited for: a quorum of the other sources had agreed" }
        ])
      })
  })

  it("decides as soon as a quorum agrees: a source that never answers holds no create up to the time-out (#52)", async () => {
    // The time-out (60 s) is far beyond the request budget (5 s): a create that waited for it would answer 503.
    await withSources([{ kind: "fresh", usd: 60_000 }, { kind: "hang" }, { kind: "fresh", usd: 60_200 }], {
      CHECKOUT_PRICE_TIMEOUT_MS: "60000",
      CHECKOUT_REQUEST_TIMEOUT_MS: "5000"
    }, async (app) => {
      const merchant = await app.createMerchant()
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(created.status).toBe(201)
      expect(bitcoinOption(created.body).quoteRate).toBe(60_100)
      expect(requests[1]).toBe(1)
      const detail = await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}`)
      const btc = detail.body.quotes.find((quote: QuoteJson) => quote.assetCode === "BTC")
      expect(btc.sources.map((source: QuoteJson["sources"][number]) => source.source)).toEqual([hostOf(0), hostOf(2)])
      expect(btc.leftOut).toEqual([{ source: hostOf(1), reason: "not waited for: a quorum of the other sources had agreed" }])
    })
  })

  it("answers a create past its request budget with a 503 that names no cause it does not know (#52)", async () => {
    await withSources([{ kind: "hang" }], { CHECKOUT_PRICE_TIMEOUT_MS: "60000", CHECKOUT_REQUEST_TIMEOUT_MS: "500" }, async (app) => {
      const merchant = await app.createMerchant()
      const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(response).toMatchObject({ status: 503, body: { error: "The service could not finish the request in time; retry after 5 seconds" } })
      expect(response.headers.get("retry-after")).toBe("5")
    })
  })

  it("keeps the single CHECKOUT_PRICE_URL as one more source", async () => {
    behaviours.splice(0, behaviours.length, { kind: "fresh", usd: 60_000 }, { kind: "fresh", usd: 60_200 })
    requests.splice(0, requests.length, ...Array(SOURCES).fill(0))
    const app = await startTestApp({}, {
      CHECKOUT_PRICE_URLS: sourceList(1),
      CHECKOUT_PRICE_URL: urls[1],
      CHECKOUT_PRICE_JSON_PATH: "price.usd",
      CHECKOUT_PRICE_TIMESTAMP_PATH: "price.at"
    })
    try {
      const merchant = await app.createMerchant()
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(created.status).toBe(201)
      expect(bitcoinOption(created.body).quoteRate).toBe(60_100)
      expect(requests).toEqual([1, 1, 0, 0])
    } finally {
      await app.close()
    }
  })
})

const USDT_ONLY = [{
  network: "arbitrum",
  assetCode: "USDT",
  railType: "address_transfer",
  enabled: true,
  isDefault: true,
  recipientAddress: null,
  xpub: "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt"
}] as const

describe("stablecoin peg guard", { timeout: 180_000 }, () => {
  // Sources 0 and 1 price USDT, sources 2 and 3 USDC; BTC keeps the fixed test rate.
  const guardEnv = () => ({
    CHECKOUT_PRICE_URLS: "",
    CHECKOUT_STABLECOIN_DEPEG_THRESHOLD: "0.02",
    CHECKOUT_STABLECOIN_PRICE_URLS: urls.map((url, index) => `${index < 2 ? "USDT" : "USDC"}=${url}|price.usd|price.at`).join(",")
  })
  const withGuard = async (set: ReadonlyArray<Behaviour>, use: (app: TestApp) => Promise<void>) => {
    behaviours.splice(0, behaviours.length, ...set)
    requests.splice(0, requests.length, ...Array(SOURCES).fill(0))
    const app = await startTestApp({}, { CHECKOUT_PRICE_TIMEOUT_MS: "300", ...guardEnv() })
    try {
      await use(app)
    } finally {
      await app.close()
    }
  }

  it("leaves a stablecoin off its peg out of the invoice and quotes the others 1:1", async () => {
    await withGuard([{ kind: "fresh", usd: 0.95 }, { kind: "fresh", usd: "0.951" }, { kind: "fresh", usd: "0.999" }, { kind: "fresh", usd: 1.001 }], async (app) => {
      const merchant = await app.createMerchant()
      const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(created.status).toBe(201)
      const assets = created.body.paymentOptions.map((option: OptionJson) => option.assetCode)
      expect(assets).not.toContain("USDT")
      expect(assets).toContain("USDC")
      expect(assets).toContain("BTC")
      for (const option of created.body.paymentOptions.filter((candidate: OptionJson) => candidate.assetCode === "USDC")) {
        expect(option).toMatchObject({ quoteRate: 1, quotedAmount: 100 })
      }
      const detail = await merchant.dashboard(`/api/dashboard/invoices/${created.body.id}`)
      expect(detail.body.quotes.map((quote: QuoteJson) => quote.assetCode)).toEqual(["BTC", "USDC"])
      expect(detail.body.quotes[1]).toMatchObject({ rateUsd: "1", basis: "par", spread: "0.2%" })
      expect(detail.body.quotes[1].sources.map((source: QuoteJson["sources"][number]) => source.priceUsd)).toEqual(["0.999", "1.001"])
    })
  })

  it("answers 502 when the stablecoin off its peg was the only option", async () => {
    await withGuard([{ kind: "fresh", usd: 0.95 }, { kind: "fresh", usd: 0.951 }, { kind: "fresh", usd: 1 }, { kind: "fresh", usd: 1 }], async (app) => {
      const merchant = await app.createMerchant({ methods: USDT_ONLY })
      const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(response.status).toBe(502)
      expect(response.body).toEqual({ error: "The USDT price is off its 1 USD peg" })
    })
  })

  it("refuses a stablecoin whose sources cannot confirm its peg (fails closed)", async () => {
    await withGuard([{ kind: "fresh", usd: 1 }, { kind: "status", status: 429 }, { kind: "fresh", usd: 1 }, { kind: "fresh", usd: 1 }], async (app) => {
      const merchant = await app.createMerchant({ methods: USDT_ONLY })
      const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(response.status).toBe(502)
      expect(response.body).toEqual({ error: "The USDT price source is unavailable" })
    })
  })

  it("quotes a stablecoin within the threshold at par", async () => {
    await withGuard([{ kind: "fresh", usd: 0.99 }, { kind: "fresh", usd: 0.995 }, { kind: "fresh", usd: 1 }, { kind: "fresh", usd: 1 }], async (app) => {
      const merchant = await app.createMerchant({ methods: USDT_ONLY })
      const response = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 100 } })
      expect(response.status).toBe(201)
      expect(response.body.paymentOptions).toHaveLength(1)
      expect(response.body.paymentOptions[0]).toMatchObject({ assetCode: "USDT", quoteRate: 1, quotedAmount: 100 })
    })
  })
})
