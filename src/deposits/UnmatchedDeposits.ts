import { Context, Effect, Layer } from "effect"
import type { InvoiceNotFound } from "../domain/Errors.ts"
import type { UnmatchedDeposit } from "./UnmatchedDeposit.ts"
import { type InvalidCursor, type UnmatchedDepositPage, UnmatchedDepositsRepo } from "./UnmatchedDepositsRepo.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** The merchant's unmatched deposits (transfers the chain watchers could not count), as the dashboard lists them. */
export class UnmatchedDeposits extends Context.Service<UnmatchedDeposits, {
  readonly page: (merchantId: MerchantId, options: { readonly livemode: boolean; readonly cursor?: string | undefined; readonly limit?: number | undefined }) => Effect.Effect<
    UnmatchedDepositPage,
    InvalidCursor
  >
  /** Those of one of the merchant's invoices; another merchant's invoice is not found. */
  readonly forInvoice: (merchantId: MerchantId, invoiceId: string) => Effect.Effect<{ readonly data: ReadonlyArray<UnmatchedDeposit> }, InvoiceNotFound>
}>()("Deposits/UnmatchedDeposits") {
  static readonly layer = Layer.effect(
    UnmatchedDeposits,
    Effect.gen(function*() {
      const repo = yield* UnmatchedDepositsRepo
      return {
        page: Effect.fn("UnmatchedDeposits.page")(function*(merchantId: MerchantId, options: Parameters<UnmatchedDeposits["Service"]["page"]>[1]) {
          return yield* repo.page(merchantId, options)
        }),
        forInvoice: Effect.fn("UnmatchedDeposits.forInvoice")(function*(merchantId: MerchantId, invoiceId: string) {
          return { data: yield* repo.forInvoice(merchantId, invoiceId) }
        })
      }
    })
  ).pipe(Layer.provide(UnmatchedDepositsRepo.layer))
}
