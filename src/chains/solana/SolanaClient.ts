import { Connection } from "@solana/web3.js"
import { Duration, Effect } from "effect"
import { ChainRpcError } from "../ChainSource.ts"
import { COMMITMENT, NETWORK, type SolanaClient } from "./SolanaRpc.ts"

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
