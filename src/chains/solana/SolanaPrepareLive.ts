import { PublicKey } from "@solana/web3.js"
import { Clock, Effect } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import { InvalidRequest, SolanaPaymentNotPayable } from "../../domain/Errors.ts"
import { remainingAtomic } from "../../domain/Evidence.ts"
import { Invoices } from "../../invoices/Invoices.ts"
import { PAYER_KEY_MESSAGE, payerKeyBytes } from "./PayerKey.ts"
import { preparationRefusal } from "./PrepareRule.ts"
import { NETWORK } from "./SolanaCluster.ts"
import { SolanaRpc } from "./SolanaRpc.ts"
import { makeUnsignedTransfers } from "./UnsignedTransfer.ts"

/** What a preparation answers: the unsigned transaction and what it pays. */
export interface PreparedSolanaPayment {
  readonly transaction: string
  readonly blockhash: string
  readonly lastValidBlockHeight: number
  readonly paymentOptionId: string
  readonly amountAtomic: string
}

/** SolanaPrepare's implementation, loaded with @solana/web3.js on the first preparation. */
export const makeSolanaPrepare = Effect.gen(function*() {
  const invoices = yield* Invoices
  const { client, testClient } = yield* SolanaRpc
  const { chains } = yield* AppConfig
  const transfers = makeUnsignedTransfers(client, chains.rpcTimeoutMs, "Solana payment preparation")
  // A test invoice's transfer is built on devnet (its option names the devnet mint where set), never on the live cluster.
  const testTransfers = makeUnsignedTransfers(testClient, chains.rpcTimeoutMs, "Solana test payment preparation", "CHECKOUT_TEST_RPC_URL_SOLANA")

  const prepare = Effect.fn("SolanaPrepare.prepare")(function*(
    invoiceId: string,
    request: { readonly paymentOptionId: string; readonly payerPublicKey: string }
  ) {
    const payerBytes = payerKeyBytes(request.payerPublicKey)
    if (payerBytes === undefined) return yield* new InvalidRequest({ message: `payerPublicKey ${PAYER_KEY_MESSAGE}` })
    const { invoice, options, payments } = yield* invoices.getPublic(invoiceId)
    const option = options.find((candidate) => candidate.id === request.paymentOptionId)
    const payload = option?.optionPayload
    if (option === undefined || option.network !== NETWORK || payload?.methodType !== "solana") {
      return yield* new SolanaPaymentNotPayable({ message: `Payment option ${request.paymentOptionId} is not a Solana option of this invoice` })
    }
    const refusal = preparationRefusal(invoice, new Date(yield* Clock.currentTimeMillis))
    if (refusal !== undefined) return yield* new SolanaPaymentNotPayable({ message: refusal })
    // What the payment page asks for on this option: the same rule, so the prepared transfer never differs from it.
    const amountAtomic = remainingAtomic(invoice.amountMicros, option, payments)
    if (amountAtomic <= 0n) {
      return yield* new SolanaPaymentNotPayable({ message: "Nothing remains to be paid on this invoice" })
    }
    const prepared = yield* (invoice.livemode ? transfers : testTransfers).prepare({
      payer: new PublicKey(payerBytes),
      recipient: new PublicKey(String(payload.recipientAddress)),
      mint: new PublicKey(String(payload.mintAddress)),
      decimals: option.decimals,
      amountAtomic,
      reference: new PublicKey(String(payload.reference)),
      memo: String(payload.memo)
    })
    return {
      ...prepared,
      paymentOptionId: option.id,
      amountAtomic: amountAtomic.toString()
    } satisfies PreparedSolanaPayment
  })

  return { prepare }
})
