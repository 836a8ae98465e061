import { Cause, Context, Duration, Effect, Layer } from "effect"
import { AppConfig, type ChainWatchSettings, type WatchedNetwork } from "../config/AppConfig.ts"
import { EVM_CHAIN_IDS, EVM_NETWORKS, EVM_TEST_CHAIN_IDS, NETWORKS } from "../payments/Networks.ts"
import type { RailSettingsShape } from "../payments/PaymentMethod.ts"
import { recordEvidenceApplied } from "../observability/Metrics.ts"
import { RailSettings } from "../payments/RailSettings.ts"
import { ChainRepo } from "./watcher/ChainRepo.ts"
import type { ChainRpcError, ChainSource } from "./source/ChainSource.ts"
import { type ChainWatcher, makeChainWatcher, type PollReport } from "./watcher/ChainWatcher.ts"
import { makeMultiSource } from "./source/MultiSource.ts"
import { SolanaRpc } from "./solana/SolanaRpc.ts"
import { makeWatchIndex } from "./watcher/WatchedOptions.ts"
import { WatchedOptionsRepo } from "./watcher/WatchedOptionsRepo.ts"
import { WatcherLeadership } from "./watcher/WatcherLeadership.ts"
import { stateKey } from "./watcher/WatchScope.ts"
import { PaymentEvidence } from "../invoices/PaymentEvidence.ts"
import { RefundWatchLive } from "../refunds/RefundWatchLive.ts"

const MAX_BACKOFF_MILLIS = 60_000

/** The endpoints of one mode's watchers: the live ones (settings made in code may list only `endpoints`), or the testnets'. */
const endpointListsOf = (chains: ChainWatchSettings, livemode: boolean): Partial<Record<WatchedNetwork, ReadonlyArray<string>>> => {
  if (!livemode) return chains.testEndpointLists ?? {}
  const lists: Partial<Record<WatchedNetwork, ReadonlyArray<string>>> = {}
  for (const network of NETWORKS) {
    const first = chains.endpoints[network]
    const list = chains.endpointLists[network] ?? (first === undefined ? undefined : [first])
    if (list !== undefined) lists[network] = list
  }
  return lists
}

/** One source per endpoint, read as one (see MultiSource). */
const severalEndpoints = (chains: ChainWatchSettings, network: WatchedNetwork, urls: ReadonlyArray<string>, make: (url: string) => ChainSource) =>
  makeMultiSource({
    network,
    endpoints: urls.map((url) => ({ url, source: make(url) })),
    maxLag: BigInt(chains.maxEndpointLag[network]),
    quarantineMs: chains.endpointQuarantineMs
  })

/** The token contracts (or mints) of a network a mode's options name: address → asset code (the testnet's where configured). */
const tokensOf = (rails: RailSettingsShape, network: string, livemode: boolean): Map<string, string> => {
  const tokens = new Map<string, string>()
  for (const key of new Set([...Object.keys(rails.tokens), ...Object.keys(rails.testTokens ?? {})])) {
    const [tokenNetwork, asset] = key.split(":")
    const address = livemode ? rails.tokens[key] : rails.testTokens?.[key] ?? rails.tokens[key]
    if (tokenNetwork === network && address !== undefined) tokens.set(network === "solana" ? address : address.toLowerCase(), asset)
  }
  return tokens
}

/**
 * The watchers of one mode: the live ones (CHECKOUT_RPC_URL_<NETWORK>, CHECKOUT_ESPLORA_URL), or the
 * testnet ones (CHECKOUT_TEST_RPC_URL_<NETWORK>, CHECKOUT_TEST_ESPLORA_URL) over test invoices only. Both
 * are the same watcher code; a testnet EVM endpoint must answer its testnet's chain id, and in
 * production a live one its mainnet's (elsewhere anvil answers chain id 1 for every network).
 */
const watchersOf = (livemode: boolean) =>
  Effect.gen(function*() {
    const { chains, env } = yield* AppConfig
    const rails = yield* RailSettings
    const { keys } = yield* WatchedOptionsRepo
    const lists = endpointListsOf(chains, livemode)
    const retentionMillis = chains.watchRetentionDays * 86_400_000
    const label = (network: string) => stateKey({ network, livemode })
    const evmNetworks = EVM_NETWORKS.filter((network) => lists[network] !== undefined)
    const watchers: Array<ChainWatcher> = []
    // Each family's client library (viem, @scure/btc-signer, @solana/web3.js) loads only when one of
    // its networks is configured: tens of MB resident that a deployment without them never needs.
    if (evmNetworks.length > 0) {
      const { makeEvmSource } = yield* Effect.promise(() => import("./evm/EvmSource.ts"))
      // EVM deposit addresses are the same on every EVM network: one index of all EVM options serves
      // every EVM watcher, so a transfer on the wrong network is recognised as an unmatched deposit.
      const index = yield* makeWatchIndex({ networks: EVM_NETWORKS, key: keys.evmAddress, livemode, retentionMillis })
      for (const network of evmNetworks) {
        const tokens = tokensOf(rails, network, livemode)
        const chainId = !livemode ? EVM_TEST_CHAIN_IDS[network] : env === "production" ? EVM_CHAIN_IDS[network] : undefined
        watchers.push(yield* makeChainWatcher({
          source: severalEndpoints(chains, network, lists[network]!,
            (rpcUrl) => makeEvmSource({ network, rpcUrl, tokens, chainId, maxLogRange: chains.evmMaxLogRange, timeoutMs: chains.rpcTimeoutMs })),
          index,
          livemode,
          initialLookback: BigInt(2 * rails.confirmations[network]),
          rescanDepth: BigInt(rails.confirmations[network]),
          keepDepth: BigInt(Math.max(2 * rails.confirmations[network], 64)),
          waitingWarningMs: chains.corroborationWarningMs,
          onApplied: (outcome) => recordEvidenceApplied(label(network), outcome)
        }))
      }
    }
    const esplora = lists.bitcoin
    if (esplora !== undefined) {
      const { makeEsploraSource } = yield* Effect.promise(() => import("./bitcoin/EsploraSource.ts"))
      const index = yield* makeWatchIndex({ networks: ["bitcoin"], key: keys.destinationAddress, livemode, retentionMillis })
      watchers.push(yield* makeChainWatcher({
        source: severalEndpoints(chains, "bitcoin", esplora,
          (baseUrl) => makeEsploraSource({ baseUrl, timeoutMs: chains.rpcTimeoutMs, perAddressLimit: chains.bitcoinMempoolAddressLimit, signet: !livemode })),
        index,
        livemode,
        initialLookback: BigInt(2 * rails.confirmations.bitcoin),
        // Blocks read through JSON pages (an API without raw blocks) carry no proof: read again from another endpoint at depth.
        rescanDepth: BigInt(rails.confirmations.bitcoin),
        keepDepth: BigInt(Math.max(2 * rails.confirmations.bitcoin, 24)),
        waitingWarningMs: chains.corroborationWarningMs,
        onApplied: (outcome) => recordEvidenceApplied(label("bitcoin"), outcome)
      }))
    }
    const rpc = yield* SolanaRpc
    const solana = livemode ? rpc.client : rpc.testClient
    if (solana !== undefined) {
      const { makeSolanaWatcher } = yield* Effect.promise(() => import("./solana/SolanaWatcher.ts"))
      watchers.push(yield* makeSolanaWatcher({
        client: solana,
        mints: tokensOf(rails, "solana", livemode),
        servicePrefix: rails.servicePrefix,
        retentionMillis,
        livemode,
        rescanDepth: rails.confirmations["solana"],
        waitingWarningMs: chains.corroborationWarningMs,
        onApplied: (outcome) => recordEvidenceApplied(label("solana"), outcome)
      }))
    }
    return watchers
  })

export class ChainWatchers extends Context.Service<ChainWatchers, {
  /** The live watchers, then the testnet ones (test invoices only). */
  readonly watchers: ReadonlyArray<ChainWatcher>
  /**
   * One pass of a watcher (what the background loop runs at each interval), by its state key: the
   * network for a live one, `<network>:test` for a testnet one (WatchScope.ts).
   */
  readonly poll: (key: string) => Effect.Effect<PollReport, ChainRpcError>
}>()("Chains/ChainWatchers") {
  /** A watcher per network (and per testnet) that has an endpoint configured; none in a deployment without any. */
  static readonly layer = Layer.effect(
    ChainWatchers,
    Effect.gen(function*() {
      const watchers = [...(yield* watchersOf(true)), ...(yield* watchersOf(false))]
      const byKey = new Map(watchers.map((watcher) => [stateKey(watcher.scope), watcher]))
      return {
        watchers,
        poll: Effect.fn("ChainWatchers.poll")(function*(key) {
          const watcher = byKey.get(key)
          return yield* watcher === undefined ? Effect.die(new Error(`no watcher for ${key}`)) : watcher.poll
        })
      }
    })
  ).pipe(Layer.provide([ChainRepo.layer, WatchedOptionsRepo.layer, RailSettings.layer, PaymentEvidence.layer, RefundWatchLive, SolanaRpc.layer]))

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
    const unwatched = NETWORKS.filter((network) => !watchers.some((watcher) => watcher.scope.livemode && watcher.network === network))
    yield* Effect.logInfo(
      `Chain watchers: ${watchers.length === 0 ? "none" : watchers.map((watcher) => stateKey(watcher.scope)).join(", ")}` +
        (unwatched.length === 0
          ? ""
          : `; not watched (${env === "production" ? "their payment methods cannot be enabled" : "simulator only"}): ${unwatched.join(", ")}`)
    )
    for (const watcher of watchers) {
      // A testnet watcher leads, fails and backs off on its own: its lock and state are its state key's.
      const key = stateKey(watcher.scope)
      const interval = chains.pollIntervalMs[watcher.network as keyof typeof chains.pollIntervalMs]
      const pollTimeout = Duration.millis(Math.max(4 * chains.rpcTimeoutMs, 30_000))
      const loop = Effect.gen(function*() {
        let failures = 0
        while (true) {
          const leading = yield* leadership.lead(key)
          if (leading) {
            const outcome = yield* watcher.poll.pipe(Effect.timeout(pollTimeout), leadership.fenced(key), Effect.exit)
            if (outcome._tag === "Success") {
              failures = 0
            } else {
              failures++
              const message = Cause.pretty(outcome.cause).split("\n")[0]
              yield* repo.saveError(watcher.scope, message)
              yield* Effect.logWarning("Chain watcher poll failed; backing off").pipe(
                Effect.annotateLogs({ network: key, failures, error: message })
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
