import { cpSync, mkdtempSync, readFileSync, rmSync, statSync } from "node:fs"
import { join } from "node:path"
import { Effect, Layer } from "effect"
import { afterAll, describe, expect, it } from "@effect/vitest"
import { vi } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { Secrets } from "../../src/accounts/Secrets.ts"
import { ServicesLive } from "../../src/App.ts"
import { DEMO_EMAIL, DemoMerchantLive } from "../../src/demo/DemoMerchant.ts"
import { CheckoutSettingsRepo } from "../../src/payments/CheckoutSettingsRepo.ts"
import { PGLITE_TEMPLATE_VARIABLE, testConfigLayer } from "../support/TestLayers.ts"

// One embedded database directory started twice, as `npm start` uses ./data (the key file lives beside the database).
const template = process.env[PGLITE_TEMPLATE_VARIABLE]
const dataDir = mkdtempSync(`${template ?? "/tmp/checkout-demo"}-`)
if (template !== undefined) cpSync(template, dataDir, { recursive: true })
afterAll(() => rmSync(dataDir, { recursive: true, force: true }))

/** Starts the services and the demo seeding on `dataDir`, and reads what a start leaves behind. */
const start = () => {
  const printed = vi.spyOn(console, "log").mockImplementation(() => {})
  return Effect.gen(function*() {
    const { jwtSecret, encryptionKey } = yield* Secrets
    const merchant = yield* Effect.flatMap(Accounts, (accounts) => accounts.findMerchantByEmail(DEMO_EMAIL))
    const settings = yield* Effect.flatMap(CheckoutSettingsRepo, (repo) => repo.find(merchant!.id, true))
    return { jwtSecret, encryptionKey, merchantId: merchant!.id, settings, printed: printed.mock.calls.flat().join("\n") }
  }).pipe(
    Effect.provide(DemoMerchantLive.pipe(Layer.provideMerge(ServicesLive), Layer.provideMerge(testConfigLayer({ demo: true, dataDir, databaseUrl: undefined })))),
    Effect.ensuring(Effect.sync(() => printed.mockRestore()))
  )
}

describe("decisions.md: the demo merchant and the secrets of a development database", () => {
  it.live("seeds the methods the ruling lists; a second start reuses the generated secrets and prints the key kept in data/demo-api-key.txt (mode 600)",
    () =>
      Effect.gen(function*() {
        const first = yield* start()
        expect(first.settings.methods.map(({ network, assetCode, railType, isDefault }) => ({ network, assetCode, railType, isDefault }))).toEqual([
          { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", isDefault: true },
          { network: "arbitrum", assetCode: "USDT", railType: "address_transfer", isDefault: false },
          { network: "base", assetCode: "USDC", railType: "address_transfer", isDefault: false },
          { network: "solana", assetCode: "USDC", railType: "address_transfer", isDefault: false },
          { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", isDefault: false }
        ])
        const keyFile = join(dataDir, "demo-api-key.txt")
        const apiKey = readFileSync(keyFile, "utf8").trim()
        expect(statSync(keyFile).mode & 0o777).toBe(0o600)
        expect(first.printed).toContain(`Demo API key: ${apiKey}`)

        const second = yield* start()
        expect(second.merchantId).toBe(first.merchantId)
        expect(Buffer.from(second.jwtSecret)).toEqual(Buffer.from(first.jwtSecret))
        expect(Buffer.from(second.encryptionKey)).toEqual(Buffer.from(first.encryptionKey))
        expect(Buffer.from(first.jwtSecret).length).toBe(32)
        expect(second.printed).toContain(`Demo API key: ${apiKey}`)
        expect(readFileSync(keyFile, "utf8").trim()).toBe(apiKey)
      }), 120_000)
})
