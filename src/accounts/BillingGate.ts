import { Context, Effect, Layer } from "effect"
import type { MerchantId } from "../domain/Ids.ts"

/**
 * Whether an account's billing allows it to create invoices. This implementation reads the
 * billing state kept on the account (set with `npm run cli -- billing block|unblock`); a real
 * billing system replaces the layer.
 */
export class BillingGate extends Context.Service<BillingGate, {
  readonly allowsInvoiceCreation: (merchant: { readonly merchantId: MerchantId; readonly billingStatus: "active" | "blocked" }) => Effect.Effect<boolean>
}>()("Accounts/BillingGate") {
  static readonly accountState = Layer.succeed(BillingGate, {
    allowsInvoiceCreation: (merchant) => Effect.succeed(merchant.billingStatus === "active")
  })
}
