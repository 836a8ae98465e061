import { Context, Data, Effect, Layer } from "effect"

export class PriceUnavailable extends Data.TaggedError("PriceUnavailable")<{ readonly reason: string }> {}

/** USD price of one whole unit of an asset, as micro-dollars. */
export class PriceOracle extends Context.Service<PriceOracle, {
  readonly usdMicrosPerUnit: (assetCode: string) => Effect.Effect<bigint, PriceUnavailable>
}>()("Payments/PriceOracle") {
  /** Stablecoins at 1:1 and BTC at a fixed rate: for the demo and tests. */
  static readonly fixed = (btcUsd: bigint = 65_000_000_000n) =>
    Layer.succeed(PriceOracle, {
      usdMicrosPerUnit: (assetCode) =>
        assetCode === "BTC"
          ? Effect.succeed(btcUsd)
          : assetCode === "USDT" || assetCode === "USDC"
          ? Effect.succeed(1_000_000n)
          : Effect.fail(new PriceUnavailable({ reason: `no price for ${assetCode}` }))
    })
}
