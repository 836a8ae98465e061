import { Duration, Effect, Layer } from "effect"
import { NETWORK, SolanaRpc } from "./chains/solana/SolanaRpc.ts"
import { AppConfig } from "./config/AppConfig.ts"
import { SolanaPreparationUnavailable } from "./domain/Errors.ts"
import { SolanaTransferBuilder, type SolanaTransferRequest } from "./refunds/RefundTransactions.ts"

/** A merchant waits for this: answer 503 rather than hang on a slow RPC. */
const MAX_BLOCKHASH_MILLIS = 5_000
const ATTEMPT_MILLIS = 2_000

/**
 * The refunds' Solana transfers over the service's Solana client and chains/solana/SolanaTransfer.ts
 * (the same transaction the payer page prepares for payments). @solana/web3.js loads on the first
 * preparation; without a configured endpoint every preparation answers unavailable.
 */
export const SolanaRefundTransfersLive = Layer.effect(
  SolanaTransferBuilder,
  Effect.gen(function*() {
    const { client } = yield* SolanaRpc
    const { chains } = yield* AppConfig
    const attempt = { timeoutMs: Math.min(chains.rpcTimeoutMs, ATTEMPT_MILLIS) }
    const unavailable = (cause: unknown) => Effect.logWarning("Solana refund preparation unavailable", cause).pipe(Effect.andThen(Effect.fail(new SolanaPreparationUnavailable())))
    const libraries = Effect.cached(Effect.promise(async () => ({
      web3: await import("@solana/web3.js"),
      transfer: await import("./chains/solana/SolanaTransfer.ts")
    })))
    const loaded = yield* libraries
    return {
      build: Effect.fn("SolanaRefundTransfers.build")(function*(request: SolanaTransferRequest) {
        if (client === undefined) return yield* unavailable(`no Solana endpoint configured (CHECKOUT_RPC_URL_${NETWORK.toUpperCase()})`)
        const { transfer, web3 } = yield* loaded
        const mint = new web3.PublicKey(request.mint)
        const [{ blockhash, lastValidBlockHeight }, account] = yield* Effect.all([
          client.call("getLatestBlockhash", (connection) => connection.getLatestBlockhash(), attempt),
          client.call("getAccountInfo", (connection) => connection.getAccountInfo(mint), attempt)
        ], { concurrency: 2 }).pipe(
          Effect.timeoutOrElse({ duration: Duration.millis(MAX_BLOCKHASH_MILLIS), orElse: () => unavailable("getLatestBlockhash timed out") }),
          Effect.catchTag("ChainRpcError", unavailable)
        )
        const transaction = transfer.buildTransferTransaction({
          payer: new web3.PublicKey(request.payer),
          recipient: new web3.PublicKey(request.recipient),
          mint,
          decimals: request.decimals,
          amountAtomic: request.amountAtomic,
          reference: new web3.PublicKey(request.reference),
          memo: request.memo,
          blockhash,
          lastValidBlockHeight,
          ...(account === null ? {} : { tokenProgram: account.owner })
        })
        return { transaction: transfer.serializeUnsigned(transaction), blockhash, lastValidBlockHeight }
      })
    }
  })
)
