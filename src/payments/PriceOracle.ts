import { Clock, Context, Data, Duration, Effect, Layer, Queue, Ref, Result, type Scope, Semaphore } from "effect"
import { FetchHttpClient, HttpClient } from "effect/http"
import { AppConfig } from "../config/AppConfig.ts"
import { usdStringToMicros } from "../domain/Money.ts"
import {
  at,
  btcSources,
  decisionSoFar,
  microsText,
  type PricedAsset,
  type PriceMeasurement,
  type PriceSource,
  ppmAsPercent,
  priceToMicros,
  type RefusalCause,
  type SourceLeftOut,
  type SourcePrice,
  stablecoinSources,
  timestampMillis
} from "./PriceSources.ts"

export { priceToMicros }

/** No price: `unavailable`, too few sources answered; `disagree`, too few of the answers agree. */
export class PriceUnavailable extends Data.TaggedError("PriceUnavailable")<{ readonly reason: string; readonly cause?: RefusalCause }> {}

/** A stablecoin whose price sources put it further from 1 USD than CHECKOUT_STABLECOIN_DEPEG_THRESHOLD allows. */
export class StablecoinOffPeg extends Data.TaggedError("StablecoinOffPeg")<{ readonly assetCode: string; readonly reason: string }> {}

/** The USD rate an asset is quoted at, and what it rests on (recorded with the invoice). */
export interface PriceQuote {
  readonly assetCode: string
  /** Micro-dollars per whole unit: the rate of the options in this asset. */
  readonly usdMicros: bigint
  /**
   * `sources`: the median of the price sources' fresh answers; `par`: a stablecoin at 1 USD (its
   * sources, when the peg guard is on, are those that confirmed it); `fixed`: the demo's configured rate.
   */
  readonly basis: "sources" | "par" | "fixed"
  /** (highest − lowest) / median of the answers used, in parts per million. */
  readonly spreadPpm: bigint
  readonly sources: ReadonlyArray<SourcePrice>
  readonly leftOut: ReadonlyArray<SourceLeftOut>
}

const STABLECOIN_MICROS = 1_000_000n
const CACHE_MILLIS = 30_000
const REFRESH_AHEAD_MILLIS = 20_000

const isStablecoin = (assetCode: string): assetCode is "USDT" | "USDC" => assetCode === "USDT" || assetCode === "USDC"

const par = (assetCode: string, measurement?: PriceMeasurement): PriceQuote => ({
  assetCode,
  usdMicros: STABLECOIN_MICROS,
  basis: "par",
  spreadPpm: measurement?.spreadPpm ?? 0n,
  sources: measurement?.sources ?? [],
  leftOut: measurement?.leftOut ?? []
})

const fixedBtc = (micros: bigint): PriceQuote => ({ assetCode: "BTC", usdMicros: micros, basis: "fixed", spreadPpm: 0n, sources: [], leftOut: [] })

type PriceSettings = AppConfig["Service"]["price"]
type Measure = (asset: PricedAsset) => Effect.Effect<PriceMeasurement, PriceUnavailable>

/** Each asset's sources: BTC's always, the stablecoins' only with the peg guard on. */
const configuredSources = (price: PriceSettings): Record<PricedAsset, ReadonlyArray<PriceSource>> => {
  const single = price.url === undefined ? undefined : { url: price.url, jsonPath: price.jsonPath, timestampPath: price.timestampPath }
  const guarded = price.stablecoin.depegThresholdPpm !== undefined
  return {
    BTC: btcSources(price.sources, single),
    USDT: guarded ? stablecoinSources(price.stablecoin.sources, "USDT") : [],
    USDC: guarded ? stablecoinSources(price.stablecoin.sources, "USDC") : []
  }
}

/** One source's answer body, within the time-out; a non-2xx answer or none is why it is left out. */
const fetchBody = (client: HttpClient.HttpClient, source: PriceSource, timeoutMs: number): Effect.Effect<unknown, SourceLeftOut> =>
  client.get(source.url, { headers: { accept: "application/json" } }).pipe(
    Effect.flatMap((response) => response.json),
    Effect.timeoutOrElse({
      duration: Duration.millis(timeoutMs),
      orElse: () => Effect.fail({ source: source.name, reason: `did not answer within ${timeoutMs} ms` })
    }),
    Effect.catchTag("HttpClientError", (error) =>
      Effect.fail({
        source: source.name,
        reason: error.response === undefined ? `failed: ${error.message}` : `answered ${error.response.status}`
      }))
  )

/** When the source says its price was observed (ISO), or why it is left out: no timestamp, or too old. */
const observedAtOf = (source: PriceSource, body: unknown, maxAgeSeconds: number): Effect.Effect<string | null, SourceLeftOut> =>
  Effect.gen(function*() {
    if (source.timestampPath === undefined) return null
    const stamp = timestampMillis(at(body, source.timestampPath))
    const now = yield* Clock.currentTimeMillis
    if (stamp === undefined) return yield* Effect.fail({ source: source.name, reason: `no timestamp at ${source.timestampPath}` })
    if (now - stamp > maxAgeSeconds * 1000) {
      return yield* Effect.fail({ source: source.name, reason: `stale: its price is ${Math.round((now - stamp) / 1000)} s old` })
    }
    return new Date(stamp).toISOString()
  })

/** One source's fresh price, or why it is left out. */
const sourceAsker = (client: HttpClient.HttpClient, price: PriceSettings) => (source: PriceSource): Effect.Effect<SourcePrice, SourceLeftOut> =>
  Effect.gen(function*() {
    const body = yield* fetchBody(client, source, price.timeoutMs)
    const micros = priceToMicros(at(body, source.jsonPath))
    if (micros === undefined) return yield* Effect.fail({ source: source.name, reason: `no price at ${source.jsonPath}` })
    const observedAt = yield* observedAtOf(source, body, price.maxAgeSeconds)
    return { source: source.name, usdMicros: micros, observedAt }
  })

/** Answers and refusals in the configured order of their sources (the order the quote records them in). */
const inSourceOrder = <T extends { readonly source: string }>(sources: ReadonlyArray<PriceSource>, entries: ReadonlyArray<T>) =>
  sources.flatMap((source) => entries.filter((entry) => entry.source === source.name))

/**
 * An asset's sources asked in parallel and aggregated (median, outliers left out, quorum, spread)
 * as each answer arrives: decided as soon as a quorum agrees (see decisionSoFar), the sources
 * still asking then interrupted.
 */
const measurer = (
  sourcesOf: Record<PricedAsset, ReadonlyArray<PriceSource>>,
  ask: ReturnType<typeof sourceAsker>,
  price: PriceSettings
): Measure =>
(asset) =>
  Effect.scoped(Effect.gen(function*() {
    const sources = sourcesOf[asset]
    const quorum = price.quorum ?? (sources.length >= 2 ? 2 : 1)
    const settled = yield* Queue.unbounded<Result.Result<SourcePrice, SourceLeftOut>>()
    // Every source reports exactly once, a defect included, or the loop below would wait for it.
    const settle = (source: PriceSource) =>
      ask(source).pipe(
        Effect.catchDefect((defect) => Effect.fail<SourceLeftOut>({ source: source.name, reason: `failed: ${String(defect)}` })),
        Effect.result,
        Effect.flatMap((result) => Queue.offer(settled, result))
      )
    yield* Effect.forEach(sources, (source) => Effect.forkScoped(settle(source)), { discard: true })
    const answers: Array<SourcePrice> = []
    const leftOut: Array<SourceLeftOut> = []
    const decide = () => {
      const pending = sources.filter((source) => ![...answers, ...leftOut].some((entry) => entry.source === source.name)).map((source) => source.name)
      return decisionSoFar(inSourceOrder(sources, answers), inSourceOrder(sources, leftOut), pending, quorum, BigInt(price.maxDeviationPpm))
    }
    let outcome = decide()
    while (outcome === undefined) {
      const result = yield* Queue.take(settled)
      if (Result.isSuccess(result)) answers.push(result.success)
      else leftOut.push(result.failure)
      outcome = decide()
    }
    if (outcome._tag === "Refused") return yield* new PriceUnavailable({ reason: `${asset}: ${outcome.reason}`, cause: outcome.cause })
    return outcome.measurement
  }))

/**
 * Each asset's measurement kept for 30 seconds; a stale one is refreshed by a single flight
 * (requests that find it stale wait for one measurement and share it). A failure is not cached.
 * From 20 seconds on, a request is answered from the cache and starts that refresh in the
 * background, so that while requests keep coming none waits on a source.
 */
const cachedMeasurements = (measure: Measure): Effect.Effect<Measure, never, Scope.Scope> =>
  Effect.gen(function*() {
    const scope = yield* Effect.scope
    const cache = yield* Ref.make(new Map<PricedAsset, { readonly measurement: PriceMeasurement; readonly fetchedAt: number }>())
    const refreshing: Record<PricedAsset, Semaphore.Semaphore> = {
      BTC: yield* Semaphore.make(1),
      USDT: yield* Semaphore.make(1),
      USDC: yield* Semaphore.make(1)
    }
    const cachedWithAge = (asset: PricedAsset) =>
      Effect.gen(function*() {
        const entry = (yield* Ref.get(cache)).get(asset)
        const now = yield* Clock.currentTimeMillis
        return entry !== undefined && now - entry.fetchedAt < CACHE_MILLIS ? { measurement: entry.measurement, ageMillis: now - entry.fetchedAt } : undefined
      })
    const cached = (asset: PricedAsset) => Effect.map(cachedWithAge(asset), (entry) => entry?.measurement)
    const refresh = (asset: PricedAsset) =>
      Effect.gen(function*() {
        const measurement = yield* measure(asset)
        const fetchedAt = yield* Clock.currentTimeMillis
        yield* Ref.update(cache, (entries) => new Map(entries).set(asset, { measurement, fetchedAt }))
        return measurement
      })
    // Skipped while a refresh runs; a failure leaves the cached measurement until it expires.
    const refreshAhead = (asset: PricedAsset) =>
      refreshing[asset].withPermitsIfAvailable(1)(refresh(asset)).pipe(
        Effect.catchTag("PriceUnavailable", (error) => Effect.logWarning(`Price refresh failed (${error.reason}); the cached price serves until it expires`)),
        Effect.forkIn(scope)
      )
    return (asset) =>
      Effect.flatMap(cachedWithAge(asset), (entry) => {
        if (entry === undefined) {
          return refreshing[asset].withPermits(1)(Effect.flatMap(cached(asset), (again) => (again !== undefined ? Effect.succeed(again) : refresh(asset))))
        }
        return entry.ageMillis >= REFRESH_AHEAD_MILLIS ? Effect.as(refreshAhead(asset), entry.measurement) : Effect.succeed(entry.measurement)
      })
  })

/** A stablecoin at par: unchecked without the peg guard, else only while its sources put it within the threshold of 1 USD. */
const stablecoinQuoter = (guard: number | undefined, measured: Measure) =>
  Effect.fnUntraced(function*(assetCode: "USDT" | "USDC") {
    if (guard === undefined) return par(assetCode)
    const measurement = yield* measured(assetCode)
    const distance = measurement.usdMicros > STABLECOIN_MICROS ? measurement.usdMicros - STABLECOIN_MICROS : STABLECOIN_MICROS - measurement.usdMicros
    // One USD is 10^6 micro-dollars: the distance in micro-dollars is the distance from the peg in ppm.
    if (distance > BigInt(guard)) {
      return yield* new StablecoinOffPeg({
        assetCode,
        reason: `${assetCode} is at ${microsText(measurement.usdMicros)} USD by its price sources, ${ppmAsPercent(distance)} from 1 USD (at most ${
          ppmAsPercent(BigInt(guard))
        } allowed)`
      })
    }
    return par(assetCode, measurement)
  })

/** USD price of one whole unit of an asset. Stablecoins quote 1:1 (checked against their sources when the peg guard is on). */
export class PriceOracle extends Context.Service<PriceOracle, {
  readonly quote: (assetCode: string) => Effect.Effect<PriceQuote, PriceUnavailable | StablecoinOffPeg>
  readonly usdMicrosPerUnit: (assetCode: string) => Effect.Effect<bigint, PriceUnavailable | StablecoinOffPeg>
}>()("Payments/PriceOracle") {
  /** Stablecoins at 1:1 and BTC at a fixed rate: for the demo and tests. */
  static readonly fixed = (btcUsdMicros: bigint = 65_000_000_000n) => {
    const quote = (assetCode: string) =>
      assetCode === "BTC"
        ? Effect.succeed(fixedBtc(btcUsdMicros))
        : isStablecoin(assetCode)
        ? Effect.succeed(par(assetCode))
        : Effect.fail(new PriceUnavailable({ reason: `no price for ${assetCode}` }))
    return Layer.succeed(PriceOracle, { quote, usdMicrosPerUnit: (assetCode) => Effect.map(quote(assetCode), (quoted) => quoted.usdMicros) })
  }

  /**
   * BTC from HTTP JSON sources (CHECKOUT_PRICE_URLS and the single CHECKOUT_PRICE_URL), asked in
   * parallel through Effect's HttpClient, each with the time-out (non-2xx answers are errors; the
   * time-out interrupts the request) and a staleness limit on the source's own timestamp (a stale
   * answer is left out). The quote is the median of the fresh answers; with three or more, one
   * further than CHECKOUT_PRICE_MAX_DEVIATION from the median of the others is left out. Refused
   * when fewer than the quorum answered or agree, or when they spread more than that; decided as
   * soon as a quorum agrees, without waiting for the slowest source. Each asset's measurement is
   * cached for 30 seconds and refreshed by one request at a time, in the background from 20
   * seconds on (a failure is not cached: the next request tries again). Stablecoins quote 1:1; with
   * CHECKOUT_STABLECOIN_DEPEG_THRESHOLD their own sources must put them within it of 1 USD.
   * Without BTC sources: the fixed demo rate, except in production.
   */
  static readonly http = Layer.effect(
    PriceOracle,
    Effect.gen(function*() {
      const { env, price } = yield* AppConfig
      const client = HttpClient.filterStatusOk(yield* HttpClient.HttpClient)
      const sourcesOf = configuredSources(price)
      const measured = yield* cachedMeasurements(measurer(sourcesOf, sourceAsker(client, price), price))
      const quoteStablecoin = stablecoinQuoter(price.stablecoin.depegThresholdPpm, measured)
      const fixedRate = usdStringToMicros(price.fixedBtcUsd) ?? 65_000_000_000n
      const quote = Effect.fnUntraced(function*(assetCode: string) {
        if (isStablecoin(assetCode)) return yield* quoteStablecoin(assetCode)
        if (assetCode !== "BTC") return yield* new PriceUnavailable({ reason: `no price for ${assetCode}` })
        if (sourcesOf.BTC.length === 0) {
          if (env === "production") return yield* new PriceUnavailable({ reason: "CHECKOUT_PRICE_URLS (or CHECKOUT_PRICE_URL) is not configured" })
          return fixedBtc(fixedRate)
        }
        const measurement = yield* measured("BTC")
        return { ...measurement, assetCode, basis: "sources" } satisfies PriceQuote
      })
      return { quote, usdMicrosPerUnit: (assetCode) => Effect.map(quote(assetCode), (quoted) => quoted.usdMicros) }
    })
  )

  /** The configured sources over the fetch client; without BTC sources, the fixed demo rate (never in production). */
  static readonly layer = PriceOracle.http.pipe(Layer.provide(FetchHttpClient.layer))
}
