import { Connection, type Finality } from "@solana/web3.js"
import { Context, Duration, Effect, Layer } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import { ChainRpcError } from "../ChainSource.ts"

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

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0].slice(0, 300)

export const makeSolanaClient = (rpcUrl: string, timeoutMs: number): SolanaClient => {
  const connection = new Connection(rpcUrl, {
    commitment: COMMITMENT,
    // Back-off is the watcher's (and the payer's retry): web3.js must not sleep on a 429 itself.
    disableRetryOnRateLimit: true,
    fetch: (input, init) => fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) })
  })
  return {
    connection,
    call: (method, run) =>
      Effect.tryPromise({
        try: () => run(connection),
        catch: (error) => new ChainRpcError({ network: NETWORK, message: `${method}: ${messageOf(error)}` })
      }).pipe(
        Effect.timeoutOrElse({
          duration: Duration.millis(timeoutMs),
          orElse: () => Effect.fail(new ChainRpcError({ network: NETWORK, message: `${method}: timed out after ${timeoutMs} ms` }))
        })
      )
  }
}

/** The Solana RPC client of CHECKOUT_RPC_URL_SOLANA; `client` is undefined when none is configured. */
export class SolanaRpc extends Context.Service<SolanaRpc, { readonly client: SolanaClient | undefined }>()("Chains/SolanaRpc") {
  static readonly layer = Layer.effect(
    SolanaRpc,
    Effect.gen(function*() {
      const { chains } = yield* AppConfig
      const url = chains.endpoints.solana
      return { client: url === undefined ? undefined : makeSolanaClient(url, chains.rpcTimeoutMs) }
    })
  )
}
