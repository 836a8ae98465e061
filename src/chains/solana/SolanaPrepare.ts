import { Context, Effect, Layer } from "effect"
import type { AppConfig } from "../../config/AppConfig.ts"
import type { InvalidRequest, InvoiceNotFound, SolanaPaymentNotPayable, SolanaPreparationUnavailable } from "../../domain/Errors.ts"
import { Invoices } from "../../invoices/Invoices.ts"
import type { PreparedSolanaPayment } from "./SolanaPrepareLive.ts"
import { SolanaRpc } from "./SolanaRpc.ts"

/**
 * The public preparation of a Solana Pay transfer for the hosted page and custom UIs: an unsigned
 * transaction of exactly what remains due on the invoice, in the chosen option's mint, to the
 * merchant's recipient, carrying the option's reference and memo; the payer's wallet signs it.
 */
export class SolanaPrepare extends Context.Service<SolanaPrepare, {
  readonly prepare: (
    invoiceId: string,
    request: { readonly paymentOptionId: string; readonly payerPublicKey: string }
  ) => Effect.Effect<PreparedSolanaPayment, InvalidRequest | InvoiceNotFound | SolanaPaymentNotPayable | SolanaPreparationUnavailable>
}>()("Chains/SolanaPrepare") {
  /**
   * The implementation (SolanaPrepareLive.ts, with @solana/web3.js and spl-token) loads at start when
   * a Solana endpoint (live or devnet) is configured, so that no payer waits for it; without one, on the first
   * preparation (which then answers that preparation is unavailable).
   */
  static readonly layer = Layer.effect(
    SolanaPrepare,
    Effect.gen(function*() {
      const context = yield* Effect.context<AppConfig | Invoices | SolanaRpc>()
      const { client, testClient } = Context.get(context, SolanaRpc)
      const loaded = yield* Effect.cached(
        Effect.promise(() => import("./SolanaPrepareLive.ts")).pipe(
          Effect.flatMap(({ makeSolanaPrepare }) => makeSolanaPrepare),
          Effect.provideContext(context)
        )
      )
      if (client !== undefined || testClient !== undefined) yield* loaded
      return { prepare: (invoiceId, request) => Effect.flatMap(loaded, ({ prepare }) => prepare(invoiceId, request)) }
    })
  ).pipe(Layer.provide([SolanaRpc.layer, Invoices.layer]))
}
