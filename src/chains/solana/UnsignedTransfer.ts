import { TOKEN_PROGRAM_ID } from "@solana/spl-token"
import type { PublicKey } from "@solana/web3.js"
import { Duration, Effect } from "effect"
import { SolanaPreparationUnavailable } from "../../domain/Errors.ts"
import type { SolanaRpcClient } from "./SolanaCluster.ts"
import { buildTransferTransaction, serializeUnsigned, type TransferRequest } from "./SolanaTransfer.ts"

/** Someone waits for the answer (a payer, a merchant): answer 503 rather than hang on a slow RPC. */
const MAX_BLOCKHASH_MILLIS = 5_000
/** Each endpoint's share of it, so that a hanging one leaves time for the next (the client fails over). */
const ATTEMPT_MILLIS = 2_000

/**
 * Unsigned Solana Pay transfers with a recent blockhash, for a wallet to sign: what the payer page
 * (payments) and the dashboard (refunds) prepare. `what` names the preparation in the logs.
 */
export const makeUnsignedTransfers = (client: SolanaRpcClient | undefined, rpcTimeoutMs: number, what: string, variable = "CHECKOUT_RPC_URL_SOLANA") => {
  const attempt = { timeoutMs: Math.min(rpcTimeoutMs, ATTEMPT_MILLIS) }
  // The token program owning each mint (classic SPL Token for USDC and USDT), read once.
  const tokenPrograms = new Map<string, PublicKey>()

  const unavailable = (cause: unknown) => Effect.logWarning(`${what} unavailable`, cause).pipe(Effect.andThen(Effect.fail(new SolanaPreparationUnavailable())))

  const tokenProgramOf = (solana: SolanaRpcClient, mint: PublicKey) =>
    Effect.gen(function*() {
      const known = tokenPrograms.get(mint.toBase58())
      if (known !== undefined) return known
      const account = yield* solana.call("getAccountInfo", (connection) => connection.getAccountInfo(mint), attempt)
      const program = account?.owner ?? TOKEN_PROGRAM_ID
      tokenPrograms.set(mint.toBase58(), program)
      return program
    })

  const prepare = (request: Omit<TransferRequest, "blockhash" | "lastValidBlockHeight" | "tokenProgram">) =>
    Effect.gen(function*() {
      if (client === undefined) return yield* unavailable(`${variable} is not set`)
      const [{ blockhash, lastValidBlockHeight }, tokenProgram] = yield* Effect.all([
        client.call("getLatestBlockhash", (connection) => connection.getLatestBlockhash(), attempt),
        tokenProgramOf(client, request.mint)
      ], { concurrency: 2 }).pipe(
        Effect.timeoutOrElse({ duration: Duration.millis(MAX_BLOCKHASH_MILLIS), orElse: () => unavailable("getLatestBlockhash timed out") }),
        Effect.catchTag("ChainRpcError", unavailable)
      )
      const transaction = buildTransferTransaction({ ...request, blockhash, lastValidBlockHeight, tokenProgram })
      return { transaction: serializeUnsigned(transaction), blockhash, lastValidBlockHeight }
    })

  return { prepare }
}
