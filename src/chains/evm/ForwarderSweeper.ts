import { Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import { EVM_NETWORKS, type EvmNetwork } from "../../payments/Networks.ts"
import { RailSettings } from "../../payments/RailSettings.ts"
import { ForwarderSweepRepo } from "./ForwarderSweepRepo.ts"

export interface SweepReport {
  readonly network: string
  readonly sent: number
  readonly swept: number
  readonly failed: number
}

/**
 * Empties wallet-contract forwarders into the merchants' recipients: for each forwarder with a
 * confirmed, unswept payment (on time or late, whatever the invoice's status), the relayer calls
 * the factory's `deployAndFlush` (deploying the forwarder on first use), records the transaction
 * on the payments, and marks them swept when it is mined; a failed send or a reverted transaction
 * is retried with back-off and its error shown. While a sweep is in flight nothing more is sent
 * for that forwarder; and since a forwarder can only send its balance to its own recipient, even
 * a duplicate sweep (after a crash between sending and recording) moves no funds twice.
 */
export class ForwarderSweeper extends Context.Service<ForwarderSweeper, {
  readonly networks: ReadonlyArray<EvmNetwork>
  readonly runOnce: (network: EvmNetwork) => Effect.Effect<SweepReport>
}>()("Chains/ForwarderSweeper") {
  /**
   * The implementation (ForwarderSweeperLive.ts, with viem) loads only when some EVM network has
   * both an endpoint and a forwarder factory; otherwise no network is swept.
   */
  static readonly layer = Layer.effect(
    ForwarderSweeper,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      const { factories } = (yield* RailSettings).forwarder
      const configured = EVM_NETWORKS.some((network) => chains.endpoints[network] !== undefined && factories[network] !== undefined)
      if (!configured) return { networks: [], runOnce: (network: EvmNetwork) => Effect.succeed({ network, sent: 0, swept: 0, failed: 0 }) }
      const { makeForwarderSweeper } = yield* Effect.promise(() => import("./ForwarderSweeperLive.ts"))
      return yield* makeForwarderSweeper
    })
  ).pipe(Layer.provide([RailSettings.layer, ForwarderSweepRepo.layer]))

  /** The background loop of each network that has a watcher, a factory and the relayer key. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const { chains } = yield* AppConfig
    const sweeper = yield* ForwarderSweeper
    for (const network of sweeper.networks) {
      yield* sweeper.runOnce(network).pipe(
        Effect.catchCause((cause) => Effect.logError("Forwarder sweep failed", cause)),
        Effect.andThen(Effect.sleep(Duration.millis(chains.forwarderSweepIntervalMs))),
        Effect.forever,
        Effect.forkScoped
      )
    }
  })).pipe(Layer.provide(ForwarderSweeper.layer))
}
