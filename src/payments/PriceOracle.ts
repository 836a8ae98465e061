import { Clock, Context, Data, Duration, Effect, Layer, Ref, Semaphore } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { AppConfig } from "../config/AppConfig.ts"
import { usdStringToMicros } from "../domain/Money.ts"

export class PriceUnavailable extends Data.TaggedError("PriceUnavailable")<{ readonly reason: string }> {}

const STABLECOIN_MICROS = 1_000_000n
const CACHE_MILLIS = 30_000

const isStablecoin = (assetCode: string) => assetCode === "USDT" || assetCode === "USDC"

const at = (value: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((current, key) => (current !== null && typeof current === "object" ? (current as Record<string, unknown>)[key] : undefined), value)

/** A decimal price (number or string) as micro-dollars, truncated to 6 decimals. */
export const priceToMicros = (value: unknown): bigint | undefined => {
  const text = typeof value === "number" ? (Number.isFinite(value) ? value.toFixed(6) : "") : typeof value === "string" ? value : ""
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (match === null) return undefined
  const micros = usdStringToMicros(`${match[1]}${match[2] === undefined ? "" : `.${match[2].slice(0, 6)}`}`)
  return micros === undefined || micros <= 0n ? undefined : micros
}

/** USD price of one whole unit of an asset, as micro-dollars. Stablecoins quote 1:1. */
export class PriceOracle extends Context.Service<PriceOracle, {
  readonly usdMicrosPerUnit: (assetCode: string) => Effect.Effect<bigint, PriceUnavailable>
}>()("Payments/PriceOracle") {
  /** Stablecoins at 1:1 and BTC at a fixed rate: for the demo and tests. */
  static readonly fixed = (btcUsdMicros: bigint = 65_000_000_000n) =>
    Layer.succeed(PriceOracle, {
      usdMicrosPerUnit: (assetCode) => (assetCode === "BTC"
        ? Effect.succeed(btcUsdMicros)
        : isStablecoin(assetCode)
        ? Effect.succeed(STABLECOIN_MICROS)
        : Effect.fail(new PriceUnavailable({ reason: `no price for ${assetCode}` })))
    })

  /**
   * BTC from an HTTP JSON source (CHECKOUT_PRICE_URL; CoinGecko's simple-price shape by default)
   * through Effect's HttpClient (non-2xx answers are errors; the time-out interrupts the request),
   * with a time-out, a staleness limit on the source's own timestamp, and a 30-second cache
   * refreshed by one request at a time (a failure is not cached: the next request tries again).
   */
  static readonly http = Layer.effect(
    PriceOracle,
    Effect.gen(function*() {
      const { price } = yield* AppConfig
      const client = HttpClient.filterStatusOk(yield* HttpClient.HttpClient)
      const cache = yield* Ref.make<{ readonly micros: bigint; readonly fetchedAt: number } | undefined>(undefined)
      const refreshing = yield* Semaphore.make(1)
      const cached = Effect.gen(function*() {
        const entry = yield* Ref.get(cache)
        const now = yield* Clock.currentTimeMillis
        return entry !== undefined && now - entry.fetchedAt < CACHE_MILLIS ? entry.micros : undefined
      })
      const fetchBtc = Effect.gen(function*() {
        const url = price.url
        if (url === undefined) return yield* new PriceUnavailable({ reason: "no price source configured" })
        const body = yield* client.get(url, { headers: { accept: "application/json" } }).pipe(
          Effect.flatMap((response) => response.json),
          Effect.timeoutOrElse({
            duration: Duration.millis(price.timeoutMs),
            orElse: () => Effect.fail(new PriceUnavailable({ reason: `price source did not answer within ${price.timeoutMs} ms` }))
          }),
          Effect.catchTag("HttpClientError", (error) =>
            Effect.fail(new PriceUnavailable({
              reason: error.response === undefined ? `price source failed: ${error.message}` : `price source answered ${error.response.status}`
            })))
        )
        const micros = priceToMicros(at(body, price.jsonPath))
        if (micros === undefined) return yield* new PriceUnavailable({ reason: `no price at ${price.jsonPath}` })
        const now = yield* Clock.currentTimeMillis
        if (price.timestampPath !== undefined) {
          const stamp = Number(at(body, price.timestampPath))
          if (!Number.isFinite(stamp) || now - stamp * 1000 > price.maxAgeSeconds * 1000) {
            return yield* new PriceUnavailable({ reason: "the price is stale" })
          }
        }
        yield* Ref.set(cache, { micros, fetchedAt: now })
        return micros
      })
      return {
        usdMicrosPerUnit: Effect.fnUntraced(function*(assetCode) {
          if (isStablecoin(assetCode)) return STABLECOIN_MICROS
          if (assetCode !== "BTC") return yield* new PriceUnavailable({ reason: `no price for ${assetCode}` })
          const fresh = yield* cached
          if (fresh !== undefined) return fresh
          // Single flight: requests that find the cache stale wait for one fetch and share its price.
          return yield* refreshing.withPermits(1)(Effect.flatMap(cached, (again) => (again !== undefined ? Effect.succeed(again) : fetchBtc)))
        })
      }
    })
  )

  /** The HTTP source when configured; otherwise the fixed demo rate (never in production). */
  static readonly layer = Layer.unwrap(Effect.gen(function*() {
    const { price, env } = yield* AppConfig
    if (price.url !== undefined) return PriceOracle.http.pipe(Layer.provide(FetchHttpClient.layer))
    if (env === "production") {
      return Layer.succeed(PriceOracle, {
        usdMicrosPerUnit: (assetCode) => (isStablecoin(assetCode)
          ? Effect.succeed(STABLECOIN_MICROS)
          : Effect.fail(new PriceUnavailable({ reason: "CHECKOUT_PRICE_URL is not configured" })))
      })
    }
    return PriceOracle.fixed(usdStringToMicros(price.fixedBtcUsd) ?? 65_000_000_000n)
  }))
}
