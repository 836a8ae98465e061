import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import type { SolanaRpcClient } from "./SolanaCluster.ts"

/** The Solana RPC client of CHECKOUT_RPC_URL_SOLANA (its endpoints, preferred first); `client` is undefined when none is configured. */
export class SolanaRpc extends Context.Service<SolanaRpc, { readonly client: SolanaRpcClient | undefined }>()("Chains/SolanaRpc") {
  /** @solana/web3.js (about 15 MB resident) loads only when an endpoint is configured. */
  static readonly layer = Layer.effect(
    SolanaRpc,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      const first = chains.endpoints.solana
      if (first === undefined) return { client: undefined }
      const { makeSolanaRpcClient } = yield* Effect.promise(() => import("./SolanaRpcLive.ts"))
      return {
        client: makeSolanaRpcClient({
          urls: chains.endpointLists.solana ?? [first],
          timeoutMs: chains.rpcTimeoutMs,
          maxLag: BigInt(chains.maxEndpointLag.solana),
          quarantineMs: chains.endpointQuarantineMs
        })
      }
    })
  )
}
