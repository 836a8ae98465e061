import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"

// Production, watching base only (role api: the watcher is configured but not polling).
let production: TestApp
let development: TestApp

beforeAll(async () => {
  const watchBaseOnly = { CHECKOUT_RPC_URL_BASE: "http://127.0.0.1:9" }
  // One after the other: two embedded databases starting at once on a busy machine doubled the wait.
  production = await startTestApp({ env: "production" }, watchBaseOnly)
  development = await startTestApp({}, watchBaseOnly)
}, 240_000)
afterAll(async () => {
  await production?.close()
  await development?.close()
})

const settings = (methods: Array<Record<string, unknown>>) => ({ issuedBy: "Shop", paymentTiming: { mode: "immediate", expiresAfterMinutes: 30 }, paymentMethods: methods })
// Not the demo's public wallets, which production refuses (a test below): an account key of another seed.
const OWN_XPUB = "xpub6CtLkkSeokTNUDJRsb4eGs2kueNMkVF3hU6Gd283UNomYydu9H4zdicpGd6G7kQYeRKzJyWs5fzmnybrsj9hJHHXjYV28F7EtFS2D956mXz"
const OWN_ADDRESS = "0x1111111111111111111111111111111111111111"
const baseUsdc = { network: "base", assetCode: "USDC", railType: "address_transfer", xpub: OWN_XPUB, isDefault: true }
const ethereumUsdc = { network: "ethereum", assetCode: "USDC", railType: "address_transfer", xpub: OWN_XPUB }
const baseForwarder = { network: "base", assetCode: "USDC", railType: "wallet_contract", recipientAddress: OWN_ADDRESS }

describe("payment methods on networks without a chain watcher", () => {
  it("are refused in production with 409 naming the network, unless disabled", async () => {
    const merchant = await production.createMerchant({ withSettings: false })
    const put = (body: unknown) => merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body })
    expect((await put(settings([baseUsdc]))).status).toBe(200)
    const refused = await put(settings([baseUsdc, ethereumUsdc]))
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({
      error: "Payment methods on ethereum cannot be enabled: this deployment does not watch ethereum (CHECKOUT_RPC_URL_ETHEREUM is not set)"
    })
    const bitcoin = await put(settings([baseUsdc, { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: OWN_XPUB }]))
    expect(bitcoin.status).toBe(409)
    expect(bitcoin.body.error).toContain("CHECKOUT_ESPLORA_URL")
    expect((await put(settings([baseUsdc, { ...ethereumUsdc, enabled: false }]))).status).toBe(200)
  })

  it("refuse wallet-contract payments in production on a network without a configured forwarder factory", async () => {
    const merchant = await production.createMerchant({ withSettings: false })
    const refused = await merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: settings([baseUsdc, baseForwarder]) })
    expect(refused.status).toBe(409)
    expect(refused.body).toEqual({
      error: "Wallet-contract payments on base cannot be enabled: no forwarder factory is configured (CHECKOUT_FORWARDER_FACTORY_BASE)"
    })
  })

  it("are accepted in development, where the simulator feeds them", async () => {
    const merchant = await development.createMerchant({ withSettings: false })
    const saved = await merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: settings([baseUsdc, ethereumUsdc, baseForwarder]) })
    expect(saved.status).toBe(200)
  })
})

describe("the demo's public wallets in a merchant's payment methods (#44 item 10)", () => {
  const demoMethods = [
    { field: "xpub", method: { ...baseUsdc, xpub: DEMO_KEYS.evmXpub } },
    { field: "recipientAddress", method: { ...baseForwarder, recipientAddress: DEMO_KEYS.evmRecipient, isDefault: true } },
    { field: "xpub", method: { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", xpub: DEMO_KEYS.bitcoinZpub, isDefault: true } },
    { field: "recipientAddress", method: { network: "solana", assetCode: "USDC", railType: "address_transfer", recipientAddress: DEMO_KEYS.solanaRecipient, isDefault: true } }
  ]

  it("are refused in production with 400 saying why, before the 409s of unwatched networks", async () => {
    const merchant = await production.createMerchant({ withSettings: false })
    for (const { field, method } of demoMethods) {
      const refused = await merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: settings([method]) })
      expect(refused.status, `${method.network} ${field}`).toBe(400)
      expect(refused.body.error, `${method.network} ${field}`).toMatch(
        new RegExp(`^paymentMethods\\[0\\]\\.${field} is .*(anyone could take the funds|funds sent there are lost).*CHECKOUT_ENV=production`)
      )
    }
    // after another method, the index names it
    const second = await merchant.dashboard("/api/dashboard/checkout-settings", {
      method: "PUT",
      body: settings([baseUsdc, { ...baseForwarder, recipientAddress: DEMO_KEYS.evmRecipient }])
    })
    expect(second.status).toBe(400)
    expect(second.body.error).toMatch(/^paymentMethods\[1\]\.recipientAddress is a public demo wallet/)
  })

  it("are accepted in development (the demo merchant uses them)", async () => {
    const merchant = await development.createMerchant({ withSettings: false })
    const saved = await merchant.dashboard("/api/dashboard/checkout-settings", { method: "PUT", body: settings([{ ...baseUsdc, xpub: DEMO_KEYS.evmXpub }]) })
    expect(saved.status).toBe(200)
  })
})
