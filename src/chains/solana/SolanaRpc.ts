import type { Connection, Finality } from "@solana/web3.js"
import { Context, Effect, Layer } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import type { ChainRpcError } from "../ChainSource.ts"
import type { EndpointsReport } from "../EndpointSelection.ts"

export const NETWORK = "solana"

/**
 * The watcher reads at `confirmed`: a supermajority has voted on the slot and a rollback is
 * extremely rare, so a payment shows up within about a second. Confirmations are counted from it
 * (see SolanaWatcher); `finalized` is what the required confirmations stand for.
 */
export const COMMITMENT: Finality = "confirmed"

export interface SolanaClient {
  /**
   * One RPC call on the first usable endpoint, failing over to the next ones on an error, a
   * time-out (the configured one, or `timeoutMs` per endpoint) or HTTP 429 (Retry-After honoured);
   * a failure of all is a ChainRpcError naming the method.
   */
  readonly call: <A>(
    method: string,
    run: (connection: Connection) => Promise<A>,
    options?: { readonly timeoutMs?: number }
  ) => Effect.Effect<A, ChainRpcError>
  /**
   * The same call on every endpoint at once: every answer, or undefined when one did not answer. For
   * what one endpoint alone must not decide, such as that a transaction is gone.
   */
  readonly everyEndpoint: <A>(method: string, run: (connection: Connection) => Promise<A>) => Effect.Effect<ReadonlyArray<A> | undefined>
  /** The slot at COMMITMENT, asked of every endpoint not backing off: the one of the endpoint reads go to. */
  readonly slot: Effect.Effect<number, ChainRpcError>
  /** The endpoints' states, as the watcher publishes them. */
  readonly endpoints: Effect.Effect<EndpointsReport>
}

/** The Solana RPC client of CHECKOUT_RPC_URL_SOLANA (its endpoints, preferred first); `client` is undefined when none is configured. */
export class SolanaRpc extends Context.Service<SolanaRpc, { readonly client: SolanaClient | undefined }>()("Chains/SolanaRpc") {
  /** @solana/web3.js (about 15 MB resident) loads only when an endpoint is configured. */
  static readonly layer = Layer.effect(
    SolanaRpc,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      const first = chains.endpoints.solana
      if (first === undefined) return { client: undefined }
      const { makeSolanaClient } = yield* Effect.promise(() => import("./SolanaClient.ts"))
      return {
        client: makeSolanaClient({
          urls: chains.endpointLists.solana ?? [first],
          timeoutMs: chains.rpcTimeoutMs,
          maxLag: BigInt(chains.maxEndpointLag.solana)
        })
      }
    })
  )
}
