import { Cause, Context, Duration, Effect, Layer } from "effect"
import { AppConfig, type ChainWatchSettings, type WatchedNetwork } from "../../config/AppConfig.ts"
import { EVM_NETWORKS, NETWORKS } from "../../payments/Networks.ts"
import { recordEvidenceApplied } from "../../observability/Metrics.ts"
import { RailSettingsService } from "../../payments/RailSettings.ts"
import { ChainRepo } from "./ChainRepo.ts"
import type { ChainRpcError, ChainSource } from "./ChainSource.ts"
import { type ChainWatcher, makeChainWatcher, type PollReport } from "./ChainWatcher.ts"
import { makeMultiSource } from "../endpoints/MultiSource.ts"
import { SolanaRpc } from "../solana/SolanaRpc.ts"
import { makeWatchIndex } from "./WatchedOptions.ts"
import { WatchedOptionsRepo } from "./WatchedOptionsRepo.ts"
import { WatcherLeadership } from "./WatcherLeadership.ts"
import { PaymentEvidence } from "../../invoices/PaymentEvidence.ts"
import { RefundWatchLive } from "../../refunds/RefundWatchLive.ts"

const MAX_BACKOFF_MILLIS = 60_000

/** The network's endpoints, preferred first (settings made in code may list only `endpoints`). */
const endpointsOf = (chains: ChainWatchSettings, network: WatchedNetwork): ReadonlyArray<string> => {
  const first = chains.endpoints[network]
  return chains.endpointLists[network] ?? (first === undefined ? [] : [first])
}

/** One source per endpoint, read as one (see MultiSource). */
const severalEndpoints = (chains: ChainWatchSettings, network: WatchedNetwork, make: (url: string) => ChainSource) =>
  makeMultiSource({
    network,
    endpoints: endpointsOf(chains, network).map((url) => ({ url, source: make(url) })),
    maxLag: BigInt(chains.maxEndpointLag[network]),
    quarantineMs: chains.endpointQuarantineMs
  })

export class ChainWatchers extends Context.Service<ChainWatchers, {
  readonly watchers: ReadonlyArray<ChainWatcher>
  /** One pass of a network's watcher (what the background loop runs at each interval). */
  readonly poll: (network: string) => Effect.Effect<PollReport, ChainRpcError>
}>()("Chains/ChainWatchers") {
  /** A watcher per network that has an RPC endpoint configured; none in a deployment without any. */
  static readonly layer = Layer.effect(
    ChainWatchers,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      const rails = (yield* RailSettingsService).settings
      const { keys } = yield* WatchedOptionsRepo
      const evmNetworks = EVM_NETWORKS.filter((network) => chains.endpoints[network] !== undefined)
      const watchers: Array<ChainWatcher> = []
      // Each family's client library (viem, @scure/btc-signer, @solana/web3.js) loads only when one of
      // its networks is configured: tens of MB resident that a deployment without them never needs.
      if (evmNetworks.length > 0) {
        const { makeEvmSource } = yield* Effect.promise(() => import("../evm/EvmSource.ts"))
        // EVM deposit addresses are the same on every EVM network: one index of all EVM options serves
        // every EVM watcher, so a transfer on the wrong network is recognised as an unmatched deposit.
        const index = yield* makeWatchIndex({
          networks: EVM_NETWORKS,
          key: keys.evmAddress,
          livemode: true,
          retentionMillis: chains.watchRetentionDays * 86_400_000
        })
        for (const network of evmNetworks) {
          const tokens = new Map<string, string>()
          for (const [key, address] of Object.entries(rails.tokens)) {
            const [tokenNetwork, asset] = key.split(":")
            if (tokenNetwork === network) tokens.set(address.toLowerCase(), asset)
          }
          const depth = BigInt(Math.max(2 * rails.confirmations[network], 64))
          watchers.push(yield* makeChainWatcher({
            source: severalEndpoints(chains, network, (rpcUrl) => makeEvmSource({ network, rpcUrl, tokens, maxLogRange: chains.evmMaxLogRange, timeoutMs: chains.rpcTimeoutMs })),
            index,
            initialLookback: BigInt(2 * rails.confirmations[network]),
            rescanDepth: BigInt(rails.confirmations[network]),
            keepDepth: depth,
            waitingWarningMs: chains.corroborationWarningMs,
            onApplied: (outcome) => recordEvidenceApplied(network, outcome)
          }))
        }
      }
      const esploraUrl = chains.endpoints.bitcoin
      if (esploraUrl !== undefined) {
        const { makeEsploraSource } = yield* Effect.promise(() => import("../bitcoin/EsploraSource.ts"))
        const index = yield* makeWatchIndex({
          networks: ["bitcoin"],
          key: keys.destinationAddress,
          livemode: true,
          retentionMillis: chains.watchRetentionDays * 86_400_000
        })
        watchers.push(yield* makeChainWatcher({
          source: severalEndpoints(chains, "bitcoin", (baseUrl) =>
            makeEsploraSource({ baseUrl, timeoutMs: chains.rpcTimeoutMs, perAddressLimit: chains.bitcoinMempoolAddressLimit })),
          index,
          initialLookback: BigInt(2 * rails.confirmations.bitcoin),
          // Blocks read through JSON pages (an API without raw blocks) carry no proof: read again from another endpoint at depth.
          rescanDepth: BigInt(rails.confirmations.bitcoin),
          keepDepth: BigInt(Math.max(2 * rails.confirmations.bitcoin, 24)),
          waitingWarningMs: chains.corroborationWarningMs,
          onApplied: (outcome) => recordEvidenceApplied("bitcoin", outcome)
        }))
      }
      const solana = (yield* SolanaRpc).client
      if (solana !== undefined) {
        const { makeSolanaWatcher } = yield* Effect.promise(() => import("../solana/SolanaWatcher.ts"))
        const mints = new Map<string, string>()
        for (const [key, address] of Object.entries(rails.tokens)) {
          const [tokenNetwork, asset] = key.split(":")
          if (tokenNetwork === "solana") mints.set(address, asset)
        }
        watchers.push(yield* makeSolanaWatcher({
          client: solana,
          mints,
          servicePrefix: rails.servicePrefix,
          retentionMillis: chains.watchRetentionDays * 86_400_000,
          livemode: true,
          rescanDepth: rails.confirmations["solana"],
          waitingWarningMs: chains.corroborationWarningMs,
          onApplied: (outcome) => recordEvidenceApplied("solana", outcome)
        }))
      }
      const byNetwork = new Map(watchers.map((watcher) => [watcher.network, watcher]))
      return {
        watchers,
        poll: Effect.fn("ChainWatchers.poll")(function*(network) {
          const watcher = byNetwork.get(network)
          return yield* watcher === undefined ? Effect.die(new Error(`no watcher for ${network}`)) : watcher.poll
        })
      }
    })
  ).pipe(Layer.provide([ChainRepo.layer, WatchedOptionsRepo.layer, RailSettingsService.layer, PaymentEvidence.layer, RefundWatchLive, SolanaRpc.layer]))

  /**
   * The background loops, one fiber per network, so that one network's failing RPC never stalls
   * another, the API or the sweeper: each polls at its interval while it leads its network, and
   * after a failure records the error and backs off (doubling, at most a minute) before resuming
   * from its persisted cursor.
   */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const { chains, env } = yield* AppConfig
    const { watchers } = yield* ChainWatchers
    const leadership = yield* WatcherLeadership
    const repo = yield* ChainRepo
    const unwatched = NETWORKS.filter((network) => !watchers.some((watcher) => watcher.network === network))
    yield* Effect.logInfo(
      `Chain watchers: ${watchers.length === 0 ? "none" : watchers.map((watcher) => watcher.network).join(", ")}` +
        (unwatched.length === 0
          ? ""
          : `; not watched (${env === "production" ? "their payment methods cannot be enabled" : "simulator only"}): ${unwatched.join(", ")}`)
    )
    for (const watcher of watchers) {
      const interval = chains.pollIntervalMs[watcher.network as keyof typeof chains.pollIntervalMs]
      const pollTimeout = Duration.millis(Math.max(4 * chains.rpcTimeoutMs, 30_000))
      const loop = Effect.gen(function*() {
        let failures = 0
        while (true) {
          const leading = yield* leadership.lead(watcher.network)
          if (leading) {
            const outcome = yield* watcher.poll.pipe(Effect.timeout(pollTimeout), leadership.fenced(watcher.network), Effect.exit)
            if (outcome._tag === "Success") {
              failures = 0
            } else {
              failures++
              const message = Cause.pretty(outcome.cause).split("\n")[0]
              yield* repo.saveError(watcher.network, message)
              yield* Effect.logWarning("Chain watcher poll failed; backing off").pipe(
                Effect.annotateLogs({ network: watcher.network, failures, error: message })
              )
            }
          }
          // Not leading, it asks again soon: a leader gone silent is replaced within its lease and this.
          const pause = !leading ? Math.min(interval, leadership.standbyMillis) : failures === 0 ? interval : Math.min(interval * 2 ** failures, MAX_BACKOFF_MILLIS)
          yield* Effect.sleep(Duration.millis(pause))
        }
      })
      yield* Effect.forkScoped(loop)
    }
  })).pipe(Layer.provide([WatcherLeadership.layer, ChainRepo.layer, ChainWatchers.layer]))
}
