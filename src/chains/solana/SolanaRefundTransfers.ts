import { Effect, Layer } from "effect"
import { SolanaRpc } from "./SolanaRpc.ts"
import { AppConfig } from "../../config/AppConfig.ts"
import { SolanaTransferBuilder, type SolanaTransferRequest } from "../../refunds/RefundTransactions.ts"

/**
 * The refunds' Solana transfers, prepared like the payer page's payments
 * (chains/solana/UnsignedTransfer.ts), a test invoice's on devnet. @solana/web3.js loads on the first
 * preparation; without the cluster's endpoint every preparation answers unavailable.
 */
export const SolanaRefundTransfersLive = Layer.effect(
  SolanaTransferBuilder,
  Effect.gen(function*() {
    const { client, testClient } = yield* SolanaRpc
    const { chains } = yield* AppConfig
    const loaded = yield* Effect.cached(Effect.promise(async () => {
      const [web3, unsigned] = await Promise.all([import("@solana/web3.js"), import("./UnsignedTransfer.ts")])
      return {
        web3,
        transfers: unsigned.makeUnsignedTransfers(client, chains.rpcTimeoutMs, "Solana refund preparation"),
        // A test invoice's refund: on devnet only, unavailable without it (as payments: SolanaPrepareLive.ts).
        testTransfers: unsigned.makeUnsignedTransfers(testClient, chains.rpcTimeoutMs, "Solana test refund preparation", "CHECKOUT_TEST_RPC_URL_SOLANA")
      }
    }))
    return {
      build: Effect.fn("SolanaRefundTransfers.build")(function*(request: SolanaTransferRequest) {
        const { testTransfers, transfers, web3 } = yield* loaded
        return yield* (request.livemode ? transfers : testTransfers).prepare({
          payer: new web3.PublicKey(request.payer),
          recipient: new web3.PublicKey(request.recipient),
          mint: new web3.PublicKey(request.mint),
          decimals: request.decimals,
          amountAtomic: request.amountAtomic,
          reference: new web3.PublicKey(request.reference),
          memo: request.memo
        })
      })
    }
  })
).pipe(Layer.provide(SolanaRpc.layer))
