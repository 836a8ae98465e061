import { Context, Effect, Layer } from "effect"
import { AppConfig, type ChainWatchSettings } from "../../config/AppConfig.ts"
import type { SolanaRpcClient } from "./SolanaCluster.ts"

/**
 * The Solana RPC client of CHECKOUT_RPC_URL_SOLANA (its endpoints, preferred first), and the devnet
 * one of CHECKOUT_TEST_RPC_URL_SOLANA (test invoices: their watcher and wallet preparation); each is
 * undefined when its variable is not set.
 */
export class SolanaRpc extends Context.Service<SolanaRpc, {
  readonly client: SolanaRpcClient | undefined
  readonly testClient: SolanaRpcClient | undefined
}>()("Chains/SolanaRpc") {
  /** A client over these endpoints (the devnet watcher's, CHECKOUT_TEST_RPC_URL_SOLANA, is built with it too). */
  static readonly clientOf = (chains: ChainWatchSettings, urls: ReadonlyArray<string>) =>
    Effect.map(Effect.promise(() => import("./SolanaRpcLive.ts")), ({ makeSolanaRpcClient }) =>
      makeSolanaRpcClient({
        urls,
        timeoutMs: chains.rpcTimeoutMs,
        maxLag: BigInt(chains.maxEndpointLag.solana),
        quarantineMs: chains.endpointQuarantineMs
      }))

  /** @solana/web3.js (about 15 MB resident) loads only when an endpoint is configured. */
  static readonly layer = Layer.effect(
    SolanaRpc,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      const first = chains.endpoints.solana
      const devnet = chains.testEndpointLists?.solana
      return {
        client: first === undefined ? undefined : yield* SolanaRpc.clientOf(chains, chains.endpointLists.solana ?? [first]),
        testClient: devnet === undefined ? undefined : yield* SolanaRpc.clientOf(chains, devnet)
      }
    })
  )
}
