import { PublicKey } from "@solana/web3.js"
import { TOKEN_PROGRAM_ID } from "@solana/spl-token"
import { Clock, Duration, Effect } from "effect"
import { AppConfig } from "../../config/AppConfig.ts"
import { summarize } from "../../domain/Coverage.ts"
import { InvalidRequest, SolanaPaymentNotPayable, SolanaPreparationUnavailable } from "../../domain/Errors.ts"
import { quoteAtomic, usdStringToMicros } from "../../domain/Money.ts"
import { Invoices } from "../../invoices/Invoices.ts"
import { notPayableReason } from "../../lifecycle/Payable.ts"
import { PAYER_KEY_MESSAGE, payerKeyBytes } from "./PayerKey.ts"
import type { PreparedSolanaPayment } from "./SolanaPrepare.ts"
import { NETWORK, SolanaRpc } from "./SolanaRpc.ts"
import { buildTransferTransaction, serializeUnsigned } from "./SolanaTransfer.ts"

/** A payer waits for this page: answer 503 rather than hang on a slow RPC. */
const MAX_BLOCKHASH_MILLIS = 5_000
/** Each endpoint's share of it, so that a hanging one leaves time for the next (the client fails over). */
const ATTEMPT_MILLIS = 2_000

/** SolanaPrepare's implementation, loaded with @solana/web3.js on the first preparation. */
export const makeSolanaPrepare = Effect.gen(function*() {
  const invoices = yield* Invoices
  const { client } = yield* SolanaRpc
  const { chains } = yield* AppConfig
  const attempt = { timeoutMs: Math.min(chains.rpcTimeoutMs, ATTEMPT_MILLIS) }
  const budget = Duration.millis(MAX_BLOCKHASH_MILLIS)
  // The token program owning each mint (classic SPL Token for USDC and USDT), read once.
  const tokenPrograms = new Map<string, PublicKey>()

  const unavailable = (cause: unknown) => Effect.logWarning("Solana payment preparation unavailable", cause).pipe(Effect.andThen(Effect.fail(new SolanaPreparationUnavailable())))

  const tokenProgramOf = (mint: PublicKey) =>
    Effect.gen(function*() {
      const known = tokenPrograms.get(mint.toBase58())
      if (known !== undefined || client === undefined) return known ?? TOKEN_PROGRAM_ID
      const account = yield* client.call("getAccountInfo", (connection) => connection.getAccountInfo(mint), attempt)
      const program = account?.owner ?? TOKEN_PROGRAM_ID
      tokenPrograms.set(mint.toBase58(), program)
      return program
    })

  const prepare = Effect.fn("SolanaPrepare.prepare")(function*(
    invoiceId: string,
    request: { readonly paymentOptionId: string; readonly payerPublicKey: string }
  ) {
    const payerBytes = payerKeyBytes(request.payerPublicKey)
    if (payerBytes === undefined) return yield* new InvalidRequest({ message: `payerPublicKey ${PAYER_KEY_MESSAGE}` })
    const { invoice, options } = yield* invoices.getPublic(invoiceId)
    const option = options.find((candidate) => candidate.id === request.paymentOptionId)
    const payload = option?.optionPayload
    if (option === undefined || option.network !== NETWORK || payload?.methodType !== "solana") {
      return yield* new SolanaPaymentNotPayable({ message: `Payment option ${request.paymentOptionId} is not a Solana option of this invoice` })
    }
    const notPayable = notPayableReason(invoice, new Date(yield* Clock.currentTimeMillis))
    if (notPayable?._tag === "Status") {
      return yield* new SolanaPaymentNotPayable({ message: `This invoice cannot be paid: it is ${notPayable.status}` })
    }
    if (notPayable?._tag === "DeadlinePassed") {
      return yield* new SolanaPaymentNotPayable({
        message: `This invoice cannot be paid: its payment window ended at ${notPayable.payableUntilAt.toISOString()}`
      })
    }
    const remainingMicros = summarize(invoice.amountMicros, invoice.receivedMicros, invoice.confirmedMicros).remainingMicros
    const rateMicros = usdStringToMicros(option.quoteRate)
    const amountAtomic = rateMicros === undefined || rateMicros === 0n ? 0n : quoteAtomic(remainingMicros, rateMicros, option.decimals)
    if (amountAtomic <= 0n) {
      return yield* new SolanaPaymentNotPayable({ message: "Nothing remains to be paid on this invoice" })
    }
    if (client === undefined) return yield* unavailable("CHECKOUT_RPC_URL_SOLANA is not set")
    const mint = new PublicKey(String(payload.mintAddress))
    const fetched = yield* Effect.all([
      client.call("getLatestBlockhash", (connection) => connection.getLatestBlockhash(), attempt),
      tokenProgramOf(mint)
    ], { concurrency: 2 }).pipe(
      Effect.timeoutOrElse({ duration: budget, orElse: () => unavailable("getLatestBlockhash timed out") }),
      Effect.catchTag("ChainRpcError", unavailable)
    )
    const [{ blockhash, lastValidBlockHeight }, tokenProgram] = fetched
    const transaction = buildTransferTransaction({
      payer: new PublicKey(payerBytes),
      recipient: new PublicKey(String(payload.recipientAddress)),
      mint,
      decimals: option.decimals,
      amountAtomic,
      reference: new PublicKey(String(payload.reference)),
      memo: String(payload.memo),
      blockhash,
      lastValidBlockHeight,
      tokenProgram
    })
    return {
      transaction: serializeUnsigned(transaction),
      blockhash,
      lastValidBlockHeight,
      paymentOptionId: option.id,
      amountAtomic: amountAtomic.toString()
    } satisfies PreparedSolanaPayment
  })

  return { prepare }
})
