import { describe, expect, it } from "@effect/vitest"
import { Effect, Layer } from "effect"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { SuiteMerchant, suiteOptions, testApp } from "../support/TestApp.ts"
import type { MethodJson, OptionJson } from "../support/Answers.ts"

const TPUB = "tpubDC8msFGeGuwnKG9Upg7DM2b4DaRqg3CUZa5g8v2SRQ6K4NSkxUgd7HsL2XVWbVm39yBA4LAxysQAm397zwQSQoQgewGiYZqrA9DsP4zbQ1M"
const VALID = {
  issuedBy: "Shop",
  paymentTiming: { mode: "immediate", expiresAfterMinutes: 30 },
  paymentMethods: [
    { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: DEMO_KEYS.bitcoinZpub },
    { network: "ethereum", assetCode: "USDT", railType: "wallet_contract", recipientAddress: DEMO_KEYS.evmRecipient, isDefault: true },
    { network: "arbitrum", assetCode: "USDC", railType: "address_transfer", xpub: DEMO_KEYS.evmXpub },
    { network: "solana", assetCode: "USDT", railType: "address_transfer", recipientAddress: DEMO_KEYS.solanaRecipient },
    { network: "base", assetCode: "USDC", railType: "wallet_contract", recipientAddress: DEMO_KEYS.evmRecipient, enabled: false }
  ]
}

const put = (body: unknown) => Effect.flatMap(SuiteMerchant, (merchant) => merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body }))

it.layer(SuiteMerchant.layer({ withSettings: false }).pipe(Layer.provideMerge(testApp())), suiteOptions)((it) => {
  describe("checkout settings", () => {
    it.effect("the defaults before configuration, and a create that says what to do; PUT stores and GET returns it; API keys get 403", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        expect(yield* merchant.dashboard("/api/dashboard/checkout-settings")).toMatchObject({
          status: 200,
          body: { issuedBy: null, paymentTiming: { mode: "immediate", expiresAfterMinutes: 60 }, paymentMethods: [] }
        })
        expect(yield* merchant.api("/api/checkout/invoices", { body: { amountUsd: 12 } })).toMatchObject({
          status: 404,
          body: { error: "Checkout settings are not configured yet: save them in the dashboard" }
        })
        const saved = yield* put(VALID)
        expect(saved.status).toBe(200)
        expect(saved.body.issuedBy).toBe("Shop")
        expect(saved.body.paymentTiming).toEqual({ mode: "immediate", expiresAfterMinutes: 30 })
        expect(saved.body.paymentMethods).toHaveLength(5)
        expect(saved.body.paymentMethods[1]).toMatchObject({ network: "ethereum", assetCode: "USDT", isDefault: true, enabled: true,
          tokenContract: "0xdAC17F958D2ee523a2206206994597C13D831ec7" })
        expect((yield* merchant.dashboard("/api/dashboard/checkout-settings")).body).toEqual(saved.body)
        expect((yield* merchant.api("/api/dashboard/checkout-settings")).status).toBe(403)

        const { body: invoice } = yield* merchant.api("/api/checkout/invoices", { body: { amountUsd: 12 } })
        expect(invoice.paymentOptions.map((option: OptionJson) => `${option.network}:${option.assetCode}:${option.railType}`)).toEqual([
          "bitcoin:BTC:address_transfer",
          "ethereum:USDT:wallet_contract",
          "arbitrum:USDC:address_transfer",
          "solana:USDT:address_transfer"
        ])
        expect(invoice.defaultPaymentOptionId).toBe(invoice.paymentOptions[1].id)
        expect(invoice.issuedBy).toBe("Shop")
        expect(invoice.paymentTiming.expiresAfterMinutes).toBe(30)
      }))

    it.effect("a GET answer sent back with PUT is accepted unchanged; a changed read-only tokenContract is refused", () =>
      Effect.gen(function*() {
        const merchant = yield* SuiteMerchant
        yield* put(VALID)
        const read = yield* merchant.dashboard("/api/dashboard/checkout-settings")
        const again = yield* put(read.body)
        expect(again).toMatchObject({ status: 200, body: read.body })
        const changed = structuredClone(read.body)
        changed.paymentMethods[1].tokenContract = "0x0000000000000000000000000000000000000001"
        expect(yield* put(changed)).toMatchObject({
          status: 400,
          body: { error: "paymentMethods[1].tokenContract is set by the deployment (CHECKOUT_TOKEN_<NETWORK>_<ASSET>) and cannot be changed here" }
        })
        expect((yield* merchant.dashboard("/api/dashboard/checkout-settings")).body).toEqual(read.body)
      }))

    it.effect("replaces the method list", () =>
      Effect.gen(function*() {
        yield* put(VALID)
        const saved = yield* put({ ...VALID, paymentMethods: [VALID.paymentMethods[3]] })
        expect(saved.body.paymentMethods.map((method: MethodJson) => method.network)).toEqual(["solana"])
      }))

    const cases: Array<[string, unknown, string]> = [
      ["a broken xpub checksum", { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: DEMO_KEYS.bitcoinZpub.slice(0, -1) + "t" },
        "paymentMethods[0].xpub must be a mainnet account xpub or zpub"],
      ["a testnet key", { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: TPUB }, "paymentMethods[0].xpub must be a mainnet account xpub or zpub"],
      ["a missing bitcoin xpub", { network: "bitcoin", assetCode: "BTC", railType: "address_transfer" }, "paymentMethods[0].xpub must be a mainnet account xpub or zpub"],
      ["a zpub for an EVM xpub", { network: "base", assetCode: "USDC", railType: "address_transfer", xpub: DEMO_KEYS.bitcoinZpub },
        "paymentMethods[0].xpub must be a mainnet account xpub (m/44'/60'/0')"],
      ["a bad EIP-55 checksum", { network: "ethereum", assetCode: "USDC", railType: "wallet_contract",
        recipientAddress: "0x9858effd232b4033e47d90003d41ec34ecaeda94".replace("effd", "EFfd") }, "paymentMethods[0].recipientAddress must be an EIP-55 checksummed address"],
      ["a non-address recipient", { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", recipientAddress: "hello" },
        "paymentMethods[0].recipientAddress must be an EIP-55 checksummed address"],
      ["a bad Solana key", { network: "solana", assetCode: "USDC", railType: "address_transfer", recipientAddress: "0OIl" },
        "paymentMethods[0].recipientAddress must be a base58 Solana public key (32 bytes)"],
      ["an unsupported asset", { network: "bitcoin", assetCode: "USDT", railType: "address_transfer" },
        "paymentMethods[0]: USDT on bitcoin with railType address_transfer is not supported"],
      ["a token without a configured contract", { network: "base", assetCode: "USDT", railType: "wallet_contract", recipientAddress: DEMO_KEYS.evmRecipient },
        "paymentMethods[0]: no token contract is configured for USDT on base"],
      ["an unknown network", { network: "dogecoin", assetCode: "BTC", railType: "address_transfer" },
        "paymentMethods[0].network must be one of bitcoin, ethereum, arbitrum, base, solana"]
    ]
    for (const [name, method, error] of cases) {
      it.effect(`refuses ${name}`, () =>
        Effect.gen(function*() {
          const response = yield* put({ ...VALID, paymentMethods: [method] })
          expect(response.status).toBe(400)
          expect(response.body).toEqual({ error })
        }))
    }

    it.effect("refuses duplicates, two defaults and a timing without its fields", () =>
      Effect.gen(function*() {
        const duplicate = yield* put({ ...VALID, paymentMethods: [VALID.paymentMethods[1], VALID.paymentMethods[1]] })
        expect(duplicate.body.error).toBe("paymentMethods[1] repeats USDT on ethereum (wallet_contract)")
        const twoDefaults = yield* put({ ...VALID, paymentMethods: [{ ...VALID.paymentMethods[0], isDefault: true }, VALID.paymentMethods[1]] })
        expect(twoDefaults.body.error).toBe("paymentMethods: at most one method can be the default")
        expect((yield* put({ ...VALID, paymentTiming: { mode: "immediate" } })).body.error).toBe("paymentTiming.expiresAfterMinutes is required")
        expect((yield* put({ ...VALID, paymentTiming: { mode: "due_date", dueAfterDays: 400 } })).body.error).toBe("paymentTiming.dueAfterDays must be at most 365")
        expect((yield* put({ issuedBy: "x" })).body.error).toBe("paymentTiming is required")
        // the mode rules rank with the schema's checks in the body's order (#52 item 6)
        expect((yield* put({ paymentTiming: { mode: "immediate" }, issuedBy: 5, paymentMethods: VALID.paymentMethods })).body.error).toBe(
          "paymentTiming.expiresAfterMinutes is required"
        )
        expect((yield* put({ issuedBy: 5, paymentTiming: { mode: "immediate" }, paymentMethods: VALID.paymentMethods })).body.error).toBe("issuedBy must be a string")
      }))
  })
})
