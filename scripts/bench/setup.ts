/**
 * Bench setup, through the project's own layers (ServicesLive): migrates the database and creates
 * one bench merchant with the demo's five payment methods (one per network; bitcoin gets a fresh
 * zpub, so the merchant has an address pool of its own), an API key, and the invoices that the
 * read scenarios rotate over (each with its 5 options and one recorded payment, so that detail and
 * status read payments too). Prints one JSON line ({label, merchantId, apiKey, invoiceIds, apiKeys}).
 * With --merchants N, N-1 more merchants (same methods, each its own zpub and key) for the create
 * scenario to rotate over.
 *
 *   DATABASE_URL=... setup.ts --label service          (a PostgreSQL server)
 *   setup.ts --label baseline --data-dir /tmp/x          (an embedded PGlite data directory)
 */
import { HDKey } from "@scure/bip32"
import { Effect, Layer } from "effect"
import { parseArgs } from "node:util"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { ServicesLive } from "../../src/App.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { DEMO_METHODS } from "../../src/demo/DemoMerchant.ts"
import { Invoices } from "../../src/invoices/Invoices.ts"
import { PaymentEvidence } from "../../src/invoices/PaymentEvidence.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import type { Seeded } from "./shared.ts"

const { values } = parseArgs({
  options: {
    label: { type: "string", default: "bench" },
    "data-dir": { type: "string" },
    reads: { type: "string", default: "20" },
    merchants: { type: "string", default: "1" }
  }
})
const label = values.label
const reads = Number(values.reads)
const merchants = Math.max(1, Number(values.merchants))

/** A fresh BIP84 account zpub (as test/support/TestApp.ts's freshZpub). */
const freshZpub = () =>
  HDKey.fromMasterSeed(crypto.getRandomValues(new Uint8Array(32)), { private: 0x04b2430c, public: 0x04b24746 })
    .derive("m/84'/0'/0'").publicExtendedKey

const env = {
  CHECKOUT_ENV: "test",
  CHECKOUT_DEMO: "false",
  DATABASE_URL: process.env.DATABASE_URL,
  CHECKOUT_DATA_DIR: values["data-dir"] ?? "memory://"
}
const config = { ...parseConfig(env), role: "api" as const }

const seedMerchant = (label: string, reads: number, merchants: number) =>
  Effect.gen(function*() {
    const first = yield* oneMerchant(label, reads)
    const others = yield* Effect.forEach(Array.from({ length: merchants - 1 }), () => oneMerchant(label, 0))
    const seeded: Seeded = { label, merchantId: first.merchantId, apiKey: first.apiKey, invoiceIds: first.invoiceIds,
      apiKeys: [first.apiKey, ...others.map((other) => other.apiKey)] }
    return seeded
  })

const oneMerchant = (label: string, reads: number) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const settings = yield* CheckoutSettingsRepo
    const invoices = yield* Invoices
    const evidence = yield* PaymentEvidence
    const merchantId = yield* accounts.createMerchant({ email: `bench-${label}-${crypto.randomUUID()}@bench.local` })
    yield* settings.save(merchantId, true, {
      issuedBy: "Bench Store",
      timing: { mode: "immediate", expiresAfterMinutes: 60 },
      methods: DEMO_METHODS.map((method) => (method.network === "bitcoin" ? { ...method, xpub: freshZpub() } : method))
    })
    const key = yield* Effect.orDie(accounts.createApiKey(merchantId, `bench ${label}`))
    const invoiceIds: Array<string> = []
    for (let index = 0; index < reads; index++) {
      const parts = yield* Effect.orDie(invoices.create({ merchantId, billingStatus: "active" }, { amountUsd: 42.5 }))
      if (parts.options.length !== 5) return yield* Effect.die(new Error(`expected 5 options, got ${parts.options.length}`))
      const base = parts.options.find((option) => option.network === "base")!
      yield* Effect.orDie(evidence.record({
        paymentOptionId: base.id,
        transactionHash: `0x${crypto.randomUUID().replaceAll("-", "")}${crypto.randomUUID().replaceAll("-", "")}`,
        outputIndex: 0,
        amountAtomic: 10_000_000n,
        confirmations: 1,
        observedAt: new Date()
      }))
      invoiceIds.push(parts.invoice.id)
    }
    return { merchantId, apiKey: key.rawKey, invoiceIds }
  })

const seeded = await Effect.runPromise(
  Effect.scoped(Effect.provide(seedMerchant(label, reads, merchants), Layer.provideMerge(ServicesLive, Layer.succeed(AppConfig, config))))
)
console.log(JSON.stringify(seeded))
process.exit(0)
