import type { Connection, Finality } from "@solana/web3.js"
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import type { ChainRpcError } from "../ChainSource.ts"

export const NETWORK = "solana"

/**
 * The watcher reads at `confirmed`: a supermajority has voted on the slot and a rollback is
 * extremely rare, so a payment shows up within about a second. Confirmations are counted from it
 * (see SolanaWatcher); `finalized` is what the required confirmations stand for.
 */
export const COMMITMENT: Finality = "confirmed"

export interface SolanaClient {
  readonly connection: Connection
  /** One RPC call with the configured time-out; any failure is a ChainRpcError naming the method. */
  readonly call: <A>(method: string, run: (connection: Connection) => Promise<A>) => Effect.Effect<A, ChainRpcError>
}

/** The Solana RPC client of CHECKOUT_RPC_URL_SOLANA; `client` is undefined when none is configured. */
export class SolanaRpc extends Context.Service<SolanaRpc, { readonly client: SolanaClient | undefined }>()("Chains/SolanaRpc") {
  /** @solana/web3.js (about 15 MB resident) loads only when an endpoint is configured. */
  static readonly layer = Layer.effect(
    SolanaRpc,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      const url = chains.endpoints.solana
      if (url === undefined) return { client: undefined }
      const { makeSolanaClient } = yield* Effect.promise(() => import("./SolanaClient.ts"))
      return { client: makeSolanaClient(url, chains.rpcTimeoutMs) }
    })
  )
}
