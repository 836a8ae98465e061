import type { CustomPriceSource, PricePreset, PriceSourceSpec, StablecoinAsset, StablecoinSourceSpec } from "../config/AppConfig.ts"
import { formatAtomic, usdStringToMicros } from "../domain/Money.ts"

/** One HTTP JSON source of one asset's USD price. */
export interface PriceSource extends CustomPriceSource {
  /** How the quote names it: the preset, or the custom URL's host. */
  readonly name: string
}

export type PricedAsset = "BTC" | StablecoinAsset

type Endpoint = Omit<PriceSource, "name">

/**
 * The public endpoints of the presets, per asset. Sources without a timestamp (Kraken's ticker)
 * are not checked for staleness. `binance` is Binance.US: the global exchange has no USD market.
 */
export const PRESETS: Record<PricePreset, Partial<Record<PricedAsset, Endpoint>>> = {
  coingecko: {
    BTC: {
      url: "https://api.coingecko.com/api/v3/simple/price?ids=bitcoin&vs_currencies=usd&include_last_updated_at=true",
      jsonPath: "bitcoin.usd",
      timestampPath: "bitcoin.last_updated_at"
    },
    USDT: {
      url: "https://api.coingecko.com/api/v3/simple/price?ids=tether&vs_currencies=usd&include_last_updated_at=true",
      jsonPath: "tether.usd",
      timestampPath: "tether.last_updated_at"
    },
    USDC: {
      url: "https://api.coingecko.com/api/v3/simple/price?ids=usd-coin&vs_currencies=usd&include_last_updated_at=true",
      jsonPath: "usd-coin.usd",
      timestampPath: "usd-coin.last_updated_at"
    }
  },
  coinbase: {
    BTC: { url: "https://api.exchange.coinbase.com/products/BTC-USD/ticker", jsonPath: "price", timestampPath: "time" }
  },
  kraken: {
    BTC: { url: "https://api.kraken.com/0/public/Ticker?pair=XBTUSD", jsonPath: "result.XXBTZUSD.c.0", timestampPath: undefined },
    USDT: { url: "https://api.kraken.com/0/public/Ticker?pair=USDTUSD", jsonPath: "result.USDTZUSD.c.0", timestampPath: undefined },
    USDC: { url: "https://api.kraken.com/0/public/Ticker?pair=USDCUSD", jsonPath: "result.USDCUSD.c.0", timestampPath: undefined }
  },
  binance: {
    BTC: { url: "https://api.binance.us/api/v3/ticker/24hr?symbol=BTCUSD", jsonPath: "lastPrice", timestampPath: "closeTime" }
  },
  bitstamp: {
    BTC: { url: "https://www.bitstamp.net/api/v2/ticker/btcusd/", jsonPath: "last", timestampPath: "timestamp" },
    USDT: { url: "https://www.bitstamp.net/api/v2/ticker/usdtusd/", jsonPath: "last", timestampPath: "timestamp" },
    USDC: { url: "https://www.bitstamp.net/api/v2/ticker/usdcusd/", jsonPath: "last", timestampPath: "timestamp" }
  }
}

const hostOf = (url: string) => new URL(url).host

/** Distinct names: a second source on the same host is `host#2`. */
const named = (sources: ReadonlyArray<{ readonly name: string } & Endpoint>): ReadonlyArray<PriceSource> => {
  const seen = new Map<string, number>()
  return sources.map((source) => {
    const count = (seen.get(source.name) ?? 0) + 1
    seen.set(source.name, count)
    return count === 1 ? source : { ...source, name: `${source.name}#${count}` }
  })
}

/** BTC's sources: CHECKOUT_PRICE_URLS and, when set, the single CHECKOUT_PRICE_URL. */
export const btcSources = (specs: ReadonlyArray<PriceSourceSpec>, single: Endpoint | undefined): ReadonlyArray<PriceSource> =>
  named([
    ...specs.flatMap((spec) => {
      if (!("preset" in spec)) return [{ ...spec, name: hostOf(spec.url) }]
      const endpoint = PRESETS[spec.preset].BTC
      return endpoint === undefined ? [] : [{ ...endpoint, name: spec.preset }]
    }),
    ...(single === undefined ? [] : [{ ...single, name: hostOf(single.url) }])
  ])

/** A stablecoin's sources in CHECKOUT_STABLECOIN_PRICE_URLS: the presets and the custom sources of that asset. */
export const stablecoinSources = (specs: ReadonlyArray<StablecoinSourceSpec>, asset: StablecoinAsset): ReadonlyArray<PriceSource> =>
  named(specs.flatMap((spec) => {
    if (!("preset" in spec)) return spec.asset === asset ? [{ url: spec.url, jsonPath: spec.jsonPath, timestampPath: spec.timestampPath, name: hostOf(spec.url) }] : []
    const endpoint = PRESETS[spec.preset][asset]
    return endpoint === undefined ? [] : [{ ...endpoint, name: spec.preset }]
  }))

/** The value at a dotted path (array elements by index: `c.0`). */
export const at = (value: unknown, path: string): unknown =>
  path.split(".").reduce<unknown>((current, key) => (current !== null && typeof current === "object" ? (current as Record<string, unknown>)[key] : undefined), value)

/**
 * A source's timestamp as epoch milliseconds: Unix seconds (number or numeric text), milliseconds
 * (numbers above 10^11, e.g. Binance's closeTime) or ISO 8601 text (Coinbase's time).
 */
export const timestampMillis = (value: unknown): number | undefined => {
  const numeric = typeof value === "number" ? value : typeof value === "string" && /^\d+(\.\d+)?$/.test(value.trim()) ? Number(value) : undefined
  if (numeric !== undefined) return Number.isFinite(numeric) ? (numeric > 1e11 ? numeric : numeric * 1000) : undefined
  if (typeof value !== "string") return undefined
  const parsed = Date.parse(value)
  return Number.isNaN(parsed) ? undefined : parsed
}

/** One source's answer that a quote used. */
export interface SourcePrice {
  readonly source: string
  readonly usdMicros: bigint
  /** The source's own timestamp of the price (ISO), when it gives one. */
  readonly observedAt: string | null
}

/** A source that was asked and left out, and why (with its price when it answered one: an outlier). */
export interface SourceLeftOut {
  readonly source: string
  readonly reason: string
  readonly usdMicros?: bigint
}

/** What an asset's sources said: the median of the fresh answers, their spread, who answered and who did not. */
export interface PriceMeasurement {
  readonly usdMicros: bigint
  /** (highest − lowest) / median of the answers used, in parts per million, rounded up. */
  readonly spreadPpm: bigint
  readonly sources: ReadonlyArray<SourcePrice>
  readonly leftOut: ReadonlyArray<SourceLeftOut>
}

/** The median of exact values; of an even count, the mean of the middle two rounded down to the micro-dollar. */
export const median = (values: ReadonlyArray<bigint>): bigint => {
  const sorted = [...values].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  const middle = Math.floor(sorted.length / 2)
  return sorted.length % 2 === 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2n
}

const PPM = 1_000_000n

/** The spread of `values` around `center`, in parts per million, rounded up. */
export const spreadPpm = (values: ReadonlyArray<bigint>, center: bigint): bigint => {
  const highest = values.reduce((a, b) => (a > b ? a : b))
  const lowest = values.reduce((a, b) => (a < b ? a : b))
  return ((highest - lowest) * PPM + center - 1n) / center
}

/** A fraction in parts per million as a percentage text, e.g. 4321 → "0.4321%". */
export const ppmAsPercent = (ppm: bigint) => `${formatAtomic(ppm, 4)}%`

/** Micro-dollars as a decimal USD text with 6 decimals. */
export const microsText = (micros: bigint) => formatAtomic(micros, 6)

/** Why no quote: too few answers (`unavailable`), or answers that do not agree (`disagree`). */
export type RefusalCause = "unavailable" | "disagree"

export type Aggregate =
  | { readonly _tag: "Quoted"; readonly measurement: PriceMeasurement }
  | { readonly _tag: "Refused"; readonly cause: RefusalCause; readonly reason: string }

/** How far `value` is from `center`, in parts per million, rounded up. */
const deviationPpm = (value: bigint, center: bigint): bigint => {
  const distance = value > center ? value - center : center - value
  return (distance * PPM + center - 1n) / center
}

/** Each answer's distance from the median of the others, in ppm. */
const deviationsFromOthers = (answers: ReadonlyArray<SourcePrice>) =>
  answers.map((answer, index) => {
    const others = median(answers.filter((_, other) => other !== index).map((entry) => entry.usdMicros))
    return { answer, others, deviation: deviationPpm(answer.usdMicros, others) }
  })

/**
 * With three or more answers, the ones left out as outliers, each with its price: while at least
 * three remain, the answer furthest from the median of the others, when that is beyond
 * `maxDeviationPpm`. One at a time, since a liar pulls the others' median too (of three answers
 * the median of two is their mean). With two, which one is wrong cannot be told, so none is.
 */
export const outliers = (answers: ReadonlyArray<SourcePrice>, maxDeviationPpm: bigint): ReadonlyArray<SourceLeftOut> => {
  const left: Array<SourceLeftOut> = []
  let remaining = answers
  while (remaining.length >= 3) {
    const worst = deviationsFromOthers(remaining).reduce((a, b) => (b.deviation > a.deviation ? b : a))
    if (worst.deviation <= maxDeviationPpm) break
    left.push({
      source: worst.answer.source,
      usdMicros: worst.answer.usdMicros,
      reason: `answered ${microsText(worst.answer.usdMicros)}, ${ppmAsPercent(worst.deviation)} from the median of the others (${microsText(worst.others)}; at most ${
        ppmAsPercent(maxDeviationPpm)
      })`
    })
    remaining = remaining.filter((answer) => answer !== worst.answer)
  }
  return left
}

const answeredText = (answers: ReadonlyArray<SourcePrice>) => answers.map((answer) => `${answer.source} ${microsText(answer.usdMicros)}`).join(", ")

/**
 * The median of the answers, or why there is none. Outliers (see `outliers`) are left out first;
 * then fewer than `quorum` answers in all is `unavailable`, fewer than `quorum` agreeing ones, or
 * agreeing ones that still spread more than `maxDeviationPpm`, is `disagree`.
 */
export const aggregate = (
  answers: ReadonlyArray<SourcePrice>,
  leftOut: ReadonlyArray<SourceLeftOut>,
  quorum: number,
  maxDeviationPpm: bigint
): Aggregate => {
  const whyNot = leftOut.map((entry) => `${entry.source}: ${entry.reason}`).join("; ")
  if (answers.length < quorum || answers.length === 0) {
    return {
      _tag: "Refused",
      cause: "unavailable",
      reason: `${answers.length} of ${answers.length + leftOut.length} price sources answered, ${quorum} needed${whyNot === "" ? "" : ` (${whyNot})`}`
    }
  }
  const outlying = outliers(answers, maxDeviationPpm)
  const agreeing = answers.filter((answer) => !outlying.some((outlier) => outlier.source === answer.source))
  if (agreeing.length < quorum || agreeing.length === 0) {
    return { _tag: "Refused", cause: "disagree", reason: `fewer than ${quorum} price sources agree (${answeredText(answers)})` }
  }
  const values = agreeing.map((answer) => answer.usdMicros)
  const center = median(values)
  const spread = spreadPpm(values, center)
  if (spread > maxDeviationPpm) {
    return {
      _tag: "Refused",
      cause: "disagree",
      reason: `the price sources disagree by ${ppmAsPercent(spread)}, more than ${ppmAsPercent(maxDeviationPpm)} (${answeredText(agreeing)})`
    }
  }
  return { _tag: "Quoted", measurement: { usdMicros: center, spreadPpm: spread, sources: agreeing, leftOut: [...leftOut, ...outlying] } }
}

/** Why a source still asking is left out of a quote that a quorum of the others decided. */
export const NOT_WAITED_FOR = "not waited for: a quorum of the other sources had agreed"

/**
 * The quote as soon as it can be decided, or undefined to wait for more answers: once a quorum
 * agrees within the tolerance, the sources still asking are not waited for (one hanging source
 * must not hold every create up to the time-out); until then, only the last answer decides.
 * `pending` names the sources still asking.
 */
export const decisionSoFar = (
  answers: ReadonlyArray<SourcePrice>,
  leftOut: ReadonlyArray<SourceLeftOut>,
  pending: ReadonlyArray<string>,
  quorum: number,
  maxDeviationPpm: bigint
): Aggregate | undefined => {
  const notWaited = pending.map((source): SourceLeftOut => ({ source, reason: NOT_WAITED_FOR }))
  const outcome = aggregate(answers, [...leftOut, ...notWaited], quorum, maxDeviationPpm)
  return pending.length === 0 || outcome._tag === "Quoted" ? outcome : undefined
}

/** A decimal price (number or string) as micro-dollars, truncated to 6 decimals. */
export const priceToMicros = (value: unknown): bigint | undefined => {
  const text = typeof value === "number" ? (Number.isFinite(value) ? value.toFixed(6) : "") : typeof value === "string" ? value : ""
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text.trim())
  if (match === null) return undefined
  const micros = usdStringToMicros(`${match[1]}${match[2] === undefined ? "" : `.${match[2].slice(0, 6)}`}`)
  return micros === undefined || micros <= 0n ? undefined : micros
}
