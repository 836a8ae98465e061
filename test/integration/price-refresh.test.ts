import { describe, expect, it } from "@effect/vitest"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { Effect, Layer } from "effect"
import { FetchHttpClient } from "effect/http"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll } from "vitest"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { PriceOracle } from "../../src/payments/PriceOracle.ts"

/** A real HTTP price source on loopback: it answers `usd`, or holds the request while `hang`. */
let usd = 60_000
let hang = false
let requests = 0
const held: Array<ServerResponse<IncomingMessage>> = []
let server: Server
let url: string

beforeAll(async () => {
  server = createServer((_request, response) => {
    requests++
    if (hang) return void held.push(response)
    response.writeHead(200, { "content-type": "application/json" })
    response.end(JSON.stringify({ bitcoin: { usd } }))
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  url = `http://127.0.0.1:${address.port}/price`
})
afterAll(async () => {
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

/** The oracle over the source; its cache runs on the test's clock (TestClock), the source on real time. */
const oracle = () =>
  PriceOracle.http.pipe(
    Layer.provide(FetchHttpClient.layer),
    Layer.provide(Layer.succeed(AppConfig, parseConfig({ CHECKOUT_ENV: "test", CHECKOUT_PRICE_URL: url, CHECKOUT_PRICE_TIMESTAMP_PATH: "" })))
  )

/** Real time passes (TestClock does not move by itself) until `done`, for a request or an answer to travel. */
const until = (done: () => boolean) =>
  Effect.promise(async () => {
    for (let i = 0; i < 1_000 && !done(); i++) await new Promise((resolve) => setTimeout(resolve, 10))
  })

const btcUsd = Effect.flatMap(PriceOracle, (prices) => Effect.map(prices.quote("BTC"), (quote) => Number(quote.usdMicros / 1_000_000n)))

describe("the price cache", () => {
  it.effect("refreshes in the background before it expires: no quote waits on the source, even one that hangs (#52)", () =>
    Effect.gen(function*() {
      expect(yield* btcUsd).toBe(60_000)
      expect(requests).toBe(1)
      usd = 61_000
      yield* TestClock.adjust("19 seconds")
      expect(yield* btcUsd).toBe(60_000)
      expect(requests).toBe(1)

      // From 20 s on: the cached price at once, and one refresh in the background.
      yield* TestClock.adjust("2 seconds")
      expect(yield* btcUsd).toBe(60_000)
      yield* until(() => requests === 2)
      // Once its answer is in, the refreshed price serves.
      const realPause = Effect.promise(() => new Promise((resolve) => setTimeout(resolve, 10)))
      expect(yield* btcUsd.pipe(Effect.tap(() => realPause), Effect.repeat({ until: (price) => price === 61_000, times: 500 }))).toBe(61_000)
      expect(requests).toBe(2)

      // The source hangs: quotes keep the cached price while its refresh has not answered.
      hang = true
      yield* TestClock.adjust("21 seconds")
      expect(yield* btcUsd).toBe(61_000)
      yield* until(() => requests === 3)
      expect(yield* btcUsd).toBe(61_000)
      expect(requests).toBe(3)
      expect(held).toHaveLength(1)
    }).pipe(Effect.provide(oracle())))
})
