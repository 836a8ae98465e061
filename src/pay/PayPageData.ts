import { Context, Effect, Layer } from "effect"
import type { InvoiceNotFound } from "../domain/Errors.ts"
import type { InvoiceParts } from "../domain/Invoice.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { CheckoutSettingsRepo } from "../payments/CheckoutSettingsRepo.ts"

/** What the payment page shows of an invoice, and the shop origins that may frame it. */
export class PayPageData extends Context.Service<PayPageData, {
  readonly find: (invoiceId: string) => Effect.Effect<{ readonly parts: InvoiceParts; readonly embedOrigins: ReadonlyArray<string> }, InvoiceNotFound>
}>()("Pay/PayPageData") {
  static readonly layer = Layer.effect(
    PayPageData,
    Effect.gen(function*() {
      const invoices = yield* Invoices
      const settings = yield* CheckoutSettingsRepo
      return {
        // Both by the invoice's id, at once.
        find: Effect.fn("PayPageData.find")(function*(invoiceId: string) {
          const [parts, embedOrigins] = yield* Effect.all([invoices.getPublic(invoiceId), settings.embedOriginsOfInvoice(invoiceId)], { concurrency: 2 })
          return { parts, embedOrigins }
        })
      }
    })
  ).pipe(Layer.provide([CheckoutSettingsRepo.layer, Invoices.layer]))
}
