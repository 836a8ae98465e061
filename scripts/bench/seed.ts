import { HDKey } from "@scure/bip32"
import { Effect } from "effect"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"

/** A fresh bench merchant: five methods (one per network), an API key and one invoice to read. */
export const seedMerchant = Effect.gen(function*() {
  const accounts = yield* Accounts
  const settings = yield* CheckoutSettingsRepo
  const invoices = yield* Invoices
  const merchantId = yield* accounts.createMerchant({ email: `bench-${crypto.randomUUID()}@bench.local` })
  const zpub = HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32)), { private: 0x04b2430c, public: 0x04b24746 })
    .derive("m/84'/0'/0'").publicExtendedKey
  yield* settings.save(merchantId, {
    issuedBy: "Bench Store",
    timing: { mode: "immediate", expiresAfterMinutes: 60 },
    methods: DEMO_METHODS.map((method) => (method.network === "bitcoin" ? { ...method, xpub: zpub } : method))
  })
  const key = yield* Effect.orDie(accounts.createApiKey(merchantId, "bench"))
  const parts = yield* Effect.orDie(invoices.create({ merchantId, billingStatus: "active" }, { amountUsd: 42.5 }))
  return { merchantId, apiKey: key.rawKey, invoiceId: parts.invoice.id }
})
