import { Context, Effect, Layer, Option } from "effect"
import { InvalidRequest, RefundStatusConflict, type SolanaPreparationUnavailable } from "../domain/Errors.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import type { RefundRecord } from "./Refund.ts"
import { refundDestination } from "./RefundAddress.ts"

/** A Solana Pay SPL transfer to build unsigned (keys in base58), fee paid by `payer`. */
export interface SolanaTransferRequest {
  readonly payer: string
  readonly recipient: string
  readonly mint: string
  readonly decimals: number
  readonly amountAtomic: bigint
  readonly reference: string
  readonly memo: string
  /** False for a test invoice's refund: built on devnet (CHECKOUT_TEST_RPC_URL_SOLANA), never on the live cluster. */
  readonly livemode: boolean
}

export interface UnsignedSolanaTransfer {
  readonly transaction: string
  readonly blockhash: string
  readonly lastValidBlockHeight: number
}

/**
 * Builds unsigned Solana transfers with a recent blockhash: the chain side of the refunds' Solana
 * preparation. Declared here, implemented over the Solana client and chains/solana/SolanaTransfer.ts
 * by the composition (src/chains/solana/SolanaRefundTransfers.ts), so that the refunds never import the chains.
 */
export class SolanaTransferBuilder extends Context.Service<SolanaTransferBuilder, {
  readonly build: (request: SolanaTransferRequest) => Effect.Effect<UnsignedSolanaTransfer, SolanaPreparationUnavailable>
}>()("Refunds/SolanaTransferBuilder") {}

export const PAYER_KEY_MESSAGE = "payerPublicKey must be a base58 Solana public key (32 bytes on the ed25519 curve)"

/** Transactions the merchant's wallet signs to pay a refund. */
export class RefundTransactions extends Context.Service<RefundTransactions, {
  /** An unsigned transfer of a requested Solana refund from the merchant's wallet (`payerPublicKey`). */
  readonly prepareSolana: (refund: RefundRecord, payerPublicKey: string) => Effect.Effect<
    UnsignedSolanaTransfer & { readonly refundId: string; readonly amountAtomic: string },
    InvalidRequest | RefundStatusConflict | SolanaPreparationUnavailable
  >
}>()("Refunds/RefundTransactions") {
  static readonly layer = Layer.effect(
    RefundTransactions,
    Effect.gen(function*() {
      const builder = yield* SolanaTransferBuilder
      const invoices = yield* InvoiceRepo
      return {
        prepareSolana: Effect.fn("RefundTransactions.prepareSolana")(function*(refund: RefundRecord, payerPublicKey: string) {
          if (refund.network !== "solana" || refund.reference === null || refund.tokenContract === null) {
            return yield* new RefundStatusConflict({ message: "Only a Solana refund can be paid with a prepared Solana transaction" })
          }
          if (refund.status !== "requested") {
            return yield* new RefundStatusConflict({ message: `Only a requested refund can be prepared; this refund is ${refund.status}` })
          }
          if (refundDestination("solana", payerPublicKey) === undefined) return yield* new InvalidRequest({ message: PAYER_KEY_MESSAGE })
          const livemode = Option.match(yield* invoices.find(refund.invoiceId), { onNone: () => true, onSome: (parts) => parts.invoice.livemode })
          const built = yield* builder.build({
            payer: payerPublicKey,
            recipient: refund.refundAddress,
            mint: refund.tokenContract,
            decimals: refund.decimals,
            amountAtomic: refund.amountAtomic,
            reference: refund.reference,
            memo: `Refund ${refund.invoiceId}`,
            livemode
          })
          return { ...built, refundId: refund.id, amountAtomic: refund.amountAtomic.toString() }
        })
      }
    })
  ).pipe(Layer.provide(InvoiceRepo.layer))
}
