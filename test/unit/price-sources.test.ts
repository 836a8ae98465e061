import { describe, expect, it } from "vitest"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { aggregate, btcSources, decisionSoFar, median, NOT_WAITED_FOR, outliers, PRESETS, spreadPpm, stablecoinSources, timestampMillis } from "../../src/payments/PriceSources.ts"

const answer = (source: string, usdMicros: bigint) => ({ source, usdMicros, observedAt: null })

describe("price aggregation", () => {
  it("takes the median exactly: the middle answer, or the mean of the middle two rounded down to the micro-dollar", () => {
    expect(median([60_300_000_000n, 60_000_000_000n, 60_100_000_000n])).toBe(60_100_000_000n)
    expect(median([60_000_000_001n, 60_000_000_000n])).toBe(60_000_000_000n)
    expect(median([1n])).toBe(1n)
  })

  it("measures the spread as (highest − lowest) / median in ppm, rounded up", () => {
    expect(spreadPpm([60_000_000_000n, 60_600_000_000n], 60_000_000_000n)).toBe(10_000n)
    expect(spreadPpm([60_000_000_000n, 60_000_000_001n], 60_000_000_000n)).toBe(1n)
    expect(spreadPpm([5n], 5n)).toBe(0n)
  })

  it("refuses below the quorum and above the maximum deviation, and quotes at exactly the maximum", () => {
    const leftOut = [{ source: "c", reason: "answered 429" }]
    expect(aggregate([answer("a", 60_000_000_000n)], leftOut, 2, 10_000n)).toMatchObject({
      _tag: "Refused",
      reason: "1 of 2 price sources answered, 2 needed (c: answered 429)"
    })
    expect(aggregate([], [], 1, 10_000n)._tag).toBe("Refused")
    expect(aggregate([answer("a", 60_000_000_000n), answer("b", 60_700_000_000n)], [], 2, 10_000n)._tag).toBe("Refused")
    // Exactly 1% around the median of 60 300: refused only above it.
    const edge = aggregate([answer("a", 60_000_000_000n), answer("b", 60_300_000_000n), answer("c", 60_603_000_000n)], [], 2, 10_000n)
    expect(edge).toMatchObject({ _tag: "Quoted", measurement: { usdMicros: 60_300_000_000n, spreadPpm: 10_000n } })
  })

  it("with three or more answers, leaves out one beyond the maximum deviation from the median of the others, with its price", () => {
    const lying = aggregate([answer("a", 60_000_000_000n), answer("b", 60_100_000_000n), answer("c", 90_000_000_000n)], [], 2, 10_000n)
    expect(lying).toMatchObject({ _tag: "Quoted", measurement: { usdMicros: 60_050_000_000n, sources: [{ source: "a" }, { source: "b" }] } })
    if (lying._tag !== "Quoted") throw new Error("refused")
    expect(lying.measurement.leftOut).toEqual([{ source: "c", usdMicros: 90_000_000_000n, reason: "answered 90000, 49.8752% from the median of the others (60050; at most 1%)" }])
    // A 1.7% spread made by one source: that one is left out.
    const spread = aggregate([answer("a", 60_000_000_000n), answer("b", 60_020_000_000n), answer("c", 61_020_000_000n)], [], 2, 10_000n)
    expect(spread).toMatchObject({ _tag: "Quoted", measurement: { usdMicros: 60_010_000_000n, leftOut: [{ source: "c" }] } })
    // Two answers: which one is wrong cannot be told, so none is left out.
    expect(outliers([answer("a", 60_000_000_000n), answer("b", 90_000_000_000n)], 10_000n)).toEqual([])
  })

  it("refuses with cause disagree when fewer than the quorum agree, and unavailable when fewer answer", () => {
    expect(aggregate([answer("a", 60_000_000_000n), answer("b", 90_000_000_000n)], [], 2, 10_000n)).toMatchObject({ _tag: "Refused", cause: "disagree" })
    const scattered = aggregate([answer("a", 60_000_000_000n), answer("b", 63_000_000_000n), answer("c", 66_000_000_000n)], [], 2, 10_000n)
    expect(scattered).toMatchObject({ _tag: "Refused", cause: "disagree" })
    // Quorum 3 of 4: one outlier leaves three agreeing ones; two leave too few.
    const four = [answer("a", 60_000_000_000n), answer("b", 60_010_000_000n), answer("c", 60_020_000_000n)]
    expect(aggregate([...four, answer("d", 1n)], [], 3, 10_000n)).toMatchObject({ _tag: "Quoted" })
    expect(aggregate([...four.slice(0, 2), answer("c", 90_000_000_000n), answer("d", 1n)], [], 3, 10_000n)).toMatchObject({ _tag: "Refused", cause: "disagree" })
    expect(aggregate([answer("a", 60_000_000_000n)], [{ source: "b", reason: "answered 429" }], 2, 10_000n)).toMatchObject({ _tag: "Refused", cause: "unavailable" })
  })

  it("decides as soon as a quorum agrees within the tolerance, leaving the sources still asking out; otherwise waits for the last", () => {
    const quoted = decisionSoFar([answer("a", 60_000_000_000n), answer("b", 60_200_000_000n)], [], ["c"], 2, 10_000n)
    expect(quoted).toMatchObject({ _tag: "Quoted", measurement: { usdMicros: 60_100_000_000n, leftOut: [{ source: "c", reason: NOT_WAITED_FOR }] } })
    // Two that disagree, or one of a quorum of two: wait for the third.
    expect(decisionSoFar([answer("a", 60_000_000_000n), answer("b", 90_000_000_000n)], [], ["c"], 2, 10_000n)).toBeUndefined()
    expect(decisionSoFar([answer("a", 60_000_000_000n)], [{ source: "b", reason: "answered 429" }], ["c"], 2, 10_000n)).toBeUndefined()
    // Nobody left to wait for: the refusal.
    expect(decisionSoFar([answer("a", 60_000_000_000n)], [{ source: "b", reason: "answered 429" }], [], 2, 10_000n)).toMatchObject({ _tag: "Refused", cause: "unavailable" })
  })

  it("reads source timestamps as Unix seconds, milliseconds or ISO text", () => {
    expect(timestampMillis(1_700_000_000)).toBe(1_700_000_000_000)
    expect(timestampMillis("1700000000")).toBe(1_700_000_000_000)
    expect(timestampMillis(1_700_000_000_123)).toBe(1_700_000_000_123)
    expect(timestampMillis("2023-11-14T22:13:20.000Z")).toBe(1_700_000_000_000)
    expect(timestampMillis("soon")).toBeUndefined()
    expect(timestampMillis(undefined)).toBeUndefined()
  })
})

describe("price source configuration", () => {
  it("reads presets and url|jsonPath|timestampPath sources, naming custom ones by host", () => {
    const { price } = parseConfig({ CHECKOUT_PRICE_URLS: "coingecko, kraken ,https://prices.example/btc|data.price|data.at,https://prices.example/b|p" })
    expect(price.sources).toEqual([
      { preset: "coingecko" },
      { preset: "kraken" },
      { url: "https://prices.example/btc", jsonPath: "data.price", timestampPath: "data.at" },
      { url: "https://prices.example/b", jsonPath: "p", timestampPath: undefined }
    ])
    expect(btcSources(price.sources, undefined).map((source) => source.name)).toEqual(["coingecko", "kraken", "prices.example", "prices.example#2"])
    expect(btcSources(price.sources, undefined)[0]).toMatchObject(PRESETS.coingecko.BTC!)
    expect(price.quorum).toBeUndefined()
    expect(price.maxDeviationPpm).toBe(10_000)
    expect(price.stablecoin.depegThresholdPpm).toBeUndefined()
  })

  it("keeps the single CHECKOUT_PRICE_URL as one source", () => {
    const { price } = parseConfig({ CHECKOUT_PRICE_URL: "https://one.example/p" })
    expect(btcSources(price.sources, { url: price.url!, jsonPath: price.jsonPath, timestampPath: price.timestampPath })).toEqual([
      { name: "one.example", url: "https://one.example/p", jsonPath: "bitcoin.usd", timestampPath: "bitcoin.last_updated_at" }
    ])
  })

  it("names the variable of every bad price setting", () => {
    expect(() => parseConfig({ CHECKOUT_PRICE_URLS: "coingeko" })).toThrow(/CHECKOUT_PRICE_URLS must be a comma-separated list of presets \(coingecko, coinbase/)
    expect(() => parseConfig({ CHECKOUT_PRICE_URLS: "ftp://x.example|a" })).toThrow(/CHECKOUT_PRICE_URLS must be/)
    expect(() => parseConfig({ CHECKOUT_PRICE_URLS: "https://x.example" })).toThrow(/CHECKOUT_PRICE_URLS must be/)
    expect(() => parseConfig({ CHECKOUT_PRICE_MAX_DEVIATION: "1%" })).toThrow(/CHECKOUT_PRICE_MAX_DEVIATION must be a fraction/)
    expect(() => parseConfig({ CHECKOUT_PRICE_MAX_DEVIATION: "0" })).toThrow(/CHECKOUT_PRICE_MAX_DEVIATION must be a fraction/)
    expect(() => parseConfig({ CHECKOUT_PRICE_URLS: "kraken,bitstamp", CHECKOUT_PRICE_QUORUM: "3" }))
      .toThrow(/CHECKOUT_PRICE_QUORUM is 3 but only 2 BTC price source\(s\) are configured/)
    expect(() => parseConfig({ CHECKOUT_STABLECOIN_DEPEG_THRESHOLD: "0.02" })).toThrow(/needs price sources for USDT in CHECKOUT_STABLECOIN_PRICE_URLS/)
    expect(() => parseConfig({ CHECKOUT_STABLECOIN_DEPEG_THRESHOLD: "0.02", CHECKOUT_STABLECOIN_PRICE_URLS: "USDT=https://s.example/t|p" }))
      .toThrow(/needs price sources for USDC/)
    // Coinbase has no USDC market: not a stablecoin preset.
    expect(() => parseConfig({ CHECKOUT_STABLECOIN_PRICE_URLS: "coinbase" })).toThrow(/CHECKOUT_STABLECOIN_PRICE_URLS must be/)
  })

  it("reads the peg guard: the threshold in ppm and each stablecoin's sources", () => {
    const { price } = parseConfig({
      CHECKOUT_PRICE_QUORUM: "1",
      CHECKOUT_PRICE_MAX_DEVIATION: "0.005",
      CHECKOUT_STABLECOIN_DEPEG_THRESHOLD: "0.02",
      CHECKOUT_STABLECOIN_PRICE_URLS: "kraken,USDT=https://s.example/t|usdt.price|usdt.at,USDC=https://s.example/c|usdc.price"
    })
    expect(price).toMatchObject({ quorum: 1, maxDeviationPpm: 5_000, stablecoin: { depegThresholdPpm: 20_000 } })
    expect(stablecoinSources(price.stablecoin.sources, "USDT").map((source) => [source.name, source.jsonPath])).toEqual([
      ["kraken", "result.USDTZUSD.c.0"],
      ["s.example", "usdt.price"]
    ])
    expect(stablecoinSources(price.stablecoin.sources, "USDC").map((source) => [source.name, source.url])).toEqual([
      ["kraken", PRESETS.kraken.USDC!.url],
      ["s.example", "https://s.example/c"]
    ])
  })
})
