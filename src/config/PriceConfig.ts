import { Config } from "effect"
import { check, type Env, isUrlWith, listEntries, type Reader } from "./ConfigReader.ts"

/** Public price APIs known by name (their endpoints and paths are in payments/PriceSources.ts). */
export const PRICE_PRESETS = ["coingecko", "coinbase", "kraken", "binance", "bitstamp"] as const
export type PricePreset = typeof PRICE_PRESETS[number]
/** The presets with USD markets for both USDT and USDC. */
export const STABLECOIN_PRICE_PRESETS = ["coingecko", "kraken", "bitstamp"] as const satisfies ReadonlyArray<PricePreset>
export type StablecoinAsset = "USDT" | "USDC"

/** A custom JSON price source: where the price is in its answer and, optionally, the answer's timestamp. */
export interface CustomPriceSource {
  readonly url: string
  readonly jsonPath: string
  readonly timestampPath: string | undefined
}
export type PriceSourceSpec = { readonly preset: PricePreset } | CustomPriceSource
export type StablecoinSourceSpec = { readonly preset: PricePreset } | (CustomPriceSource & { readonly asset: StablecoinAsset })

/** `url|jsonPath` or `url|jsonPath|timestampPath` (an http(s) URL; a comma in it written as %2C). */
const customPriceSource = (entry: string): CustomPriceSource | undefined => {
  const [url, jsonPath, timestampPath, ...rest] = entry.split("|").map((part) => part.trim())
  if (rest.length > 0 || !isUrlWith(["http:", "https:"])(url) || jsonPath === undefined || !/^[^\s.]+(\.[^\s.]+)*$/.test(jsonPath)) return undefined
  if (timestampPath !== undefined && timestampPath !== "" && !/^[^\s.]+(\.[^\s.]+)*$/.test(timestampPath)) return undefined
  return { url, jsonPath, timestampPath: timestampPath === undefined || timestampPath === "" ? undefined : timestampPath }
}

const priceSource = (entry: string): PriceSourceSpec | undefined =>
  (PRICE_PRESETS as ReadonlyArray<string>).includes(entry) ? { preset: entry as PricePreset } : customPriceSource(entry)

const stablecoinSource = (entry: string): StablecoinSourceSpec | undefined => {
  if ((STABLECOIN_PRICE_PRESETS as ReadonlyArray<string>).includes(entry)) return { preset: entry as PricePreset }
  const match = /^(USDT|USDC)=(.*)$/s.exec(entry)
  const custom = match === null ? undefined : customPriceSource(match[2])
  return custom === undefined ? undefined : { ...custom, asset: match![1] as StablecoinAsset }
}

const sourceList = <A>(parse: (entry: string) => A | undefined) => (value: string): ReadonlyArray<A> | undefined => {
  const parsed = listEntries(value).map(parse)
  return parsed.some((entry) => entry === undefined) ? undefined : parsed as ReadonlyArray<A>
}

/** A fraction such as 0.01 (at most 6 decimals) as parts per million, exactly; undefined when not a fraction in (0, 1]. */
const fractionToPpm = (text: string): number | undefined => {
  const match = /^(0|1)(?:\.(\d{1,6}))?$/.exec(text.trim())
  if (match === null) return undefined
  const ppm = Number(match[1]) * 1_000_000 + Number((match[2] ?? "").padEnd(6, "0"))
  return ppm > 0 && ppm <= 1_000_000 ? ppm : undefined
}

const fraction = (read: Reader, name: string, fallback: string | undefined): number | undefined =>
  read.custom(
    name,
    Config.schema(check((value) => fractionToPpm(value) !== undefined), name).pipe(
      Config.option,
      Config.map((value) => fractionToPpm(value._tag === "Some" ? value.value : fallback ?? ""))
    ),
    "must be a fraction above 0 and at most 1 with at most 6 decimals (0.01 = 1%)",
    fallback === undefined ? undefined : fractionToPpm(fallback)
  )

/** The price sources of BTC (median, quorum, spread) and of the stablecoin peg guard. */
export const priceSourcesConfig = (read: Reader) => {
  const presetNames = PRICE_PRESETS.join(", ")
  const sources = read.custom(
    "CHECKOUT_PRICE_URLS",
    Config.schema(check((value) => sourceList(priceSource)(value) !== undefined), "CHECKOUT_PRICE_URLS").pipe(
      Config.withDefault(""),
      Config.map((value) => sourceList(priceSource)(value) ?? [])
    ),
    `must be a comma-separated list of presets (${presetNames}) or url|jsonPath|timestampPath sources`,
    []
  )
  const quorum = read.integer("CHECKOUT_PRICE_QUORUM", 0, 1, 50)
  const maxDeviationPpm = fraction(read, "CHECKOUT_PRICE_MAX_DEVIATION", "0.01") ?? 10_000
  const depegThresholdPpm = fraction(read, "CHECKOUT_STABLECOIN_DEPEG_THRESHOLD", undefined)
  const stablecoinSources = read.custom(
    "CHECKOUT_STABLECOIN_PRICE_URLS",
    Config.schema(check((value) => sourceList(stablecoinSource)(value) !== undefined), "CHECKOUT_STABLECOIN_PRICE_URLS").pipe(
      Config.withDefault(""),
      Config.map((value) => sourceList(stablecoinSource)(value) ?? [])
    ),
    `must be a comma-separated list of presets (${STABLECOIN_PRICE_PRESETS.join(", ")}) or USDT=url|jsonPath|timestampPath, USDC=url|jsonPath|timestampPath sources`,
    []
  )
  const explicitQuorum = read.present("CHECKOUT_PRICE_QUORUM") && quorum > 0 ? quorum : undefined
  const btcCount = sources.length + (read.present("CHECKOUT_PRICE_URL") ? 1 : 0)
  if (explicitQuorum !== undefined && btcCount > 0 && explicitQuorum > btcCount) {
    read.problems.push(`CHECKOUT_PRICE_QUORUM is ${explicitQuorum} but only ${btcCount} BTC price source(s) are configured (CHECKOUT_PRICE_URLS, CHECKOUT_PRICE_URL)`)
  }
  if (depegThresholdPpm !== undefined) {
    for (const asset of ["USDT", "USDC"] as const) {
      const count = stablecoinSources.filter((source) => "preset" in source || source.asset === asset).length
      if (count === 0) {
        read.problems.push(`CHECKOUT_STABLECOIN_DEPEG_THRESHOLD needs price sources for ${asset} in CHECKOUT_STABLECOIN_PRICE_URLS`)
      } else if (explicitQuorum !== undefined && explicitQuorum > count) {
        read.problems.push(`CHECKOUT_PRICE_QUORUM is ${explicitQuorum} but only ${count} ${asset} price source(s) are configured (CHECKOUT_STABLECOIN_PRICE_URLS)`)
      }
    }
  }
  return {
    sources,
    quorum: explicitQuorum,
    maxDeviationPpm,
    stablecoin: { depegThresholdPpm, sources: stablecoinSources }
  }
}

/** The BTC price: the single source (url, path, staleness), the fixed rate, and the source lists. */
export const priceConfig = (r: Reader, env: Env) => ({
  url: r.url("CHECKOUT_PRICE_URL", ["http:", "https:"]),
  jsonPath: r.text("CHECKOUT_PRICE_JSON_PATH", "bitcoin.usd"),
  // Set to empty: no staleness check.
  timestampPath: env.CHECKOUT_PRICE_TIMESTAMP_PATH === "" ? undefined : r.text("CHECKOUT_PRICE_TIMESTAMP_PATH", "bitcoin.last_updated_at"),
  timeoutMs: r.integer("CHECKOUT_PRICE_TIMEOUT_MS", 3_000, 100, 60_000),
  maxAgeSeconds: r.integer("CHECKOUT_PRICE_MAX_AGE_SECONDS", 300, 1, 86_400),
  fixedBtcUsd: r.custom(
    "CHECKOUT_BTC_USD_RATE",
    Config.schema(check((value) => /^\d+(\.\d{1,6})?$/.test(value) && Number(value) > 0), "CHECKOUT_BTC_USD_RATE").pipe(Config.withDefault("65000")),
    "must be a positive decimal number with at most 6 decimals",
    "65000"
  ),
  ...priceSourcesConfig(r)
})
