import { Console, Effect, Layer } from "effect"
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs"
import { join } from "node:path"
import { Accounts } from "../accounts/Accounts.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { CheckoutSettingsRepo, type MethodInput } from "../payments/CheckoutSettingsRepo.ts"
import { PUBLIC_TEST_WALLETS } from "../payments/PublicWallets.ts"
import { serviceUrl } from "./ServiceUrl.ts"

export const DEMO_EMAIL = "demo@checkout.local"
/** DEMO ONLY: the demo merchant's dashboard password (development mode). */
export const DEMO_PASSWORD = "demo-password-not-secret"

/**
 * DEMO ONLY. Public test keys of the BIP39 test mnemonic "abandon ... about": anyone can spend
 * funds sent to them. Never use them for real payments.
 */
export const DEMO_KEYS = PUBLIC_TEST_WALLETS

/** One method per network, covering both rails: the demo merchant's configuration. */
export const DEMO_METHODS: ReadonlyArray<MethodInput> = [
  { network: "ethereum", assetCode: "USDC", railType: "wallet_contract", enabled: true, isDefault: true, recipientAddress: DEMO_KEYS.evmRecipient, xpub: null },
  { network: "arbitrum", assetCode: "USDT", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
  { network: "base", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
  { network: "solana", assetCode: "USDC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: DEMO_KEYS.solanaRecipient, xpub: null },
  { network: "bitcoin", assetCode: "BTC", railType: "address_transfer", enabled: true, isDefault: false, recipientAddress: null, xpub: DEMO_KEYS.bitcoinZpub }
]

const keyFile = (dataDir: string) => join(dataDir, "demo-api-key.txt")

/** Creates the demo merchant on an empty database and prints how to call the API. */
export const DemoMerchantLive = Layer.effectDiscard(Effect.gen(function*() {
  const config = yield* AppConfig
  if (!config.demo) return
  const accounts = yield* Accounts
  const settings = yield* CheckoutSettingsRepo
  const persistent = config.databaseUrl === undefined && !config.dataDir.startsWith("memory://")
  let apiKey: string | undefined
  const existing = yield* accounts.findMerchantByEmail(DEMO_EMAIL)
  if (existing === undefined) {
    const merchantId = yield* accounts.createMerchant({ email: DEMO_EMAIL, isDemo: true, password: DEMO_PASSWORD })
    yield* settings.save(merchantId, true, {
      issuedBy: "Demo Store",
      timing: { mode: "immediate", expiresAfterMinutes: 60 },
      methods: DEMO_METHODS
    })
    apiKey = (yield* Effect.orDie(accounts.createApiKey(merchantId, "demo"))).rawKey
    if (persistent) {
      mkdirSync(config.dataDir, { recursive: true })
      writeFileSync(keyFile(config.dataDir), `${apiKey}\n`, { mode: 0o600 })
    }
  } else if (persistent && existsSync(keyFile(config.dataDir))) {
    apiKey = readFileSync(keyFile(config.dataDir), "utf8").trim()
  }
  const base = serviceUrl(config)
  const simulate = base === "http://127.0.0.1:3000" ? "npm run simulate --" : `CHECKOUT_URL=${base} npm run simulate --`
  yield* Console.log([
    "",
    `API docs: ${base}/docs   OpenAPI: ${base}/api/openapi.json   Dashboard: ${base}/dashboard`,
    `Demo merchant ${DEMO_EMAIL}, dashboard password ${DEMO_PASSWORD} (DEMO KEYS ONLY: public test wallets, never for real funds)`,
    apiKey === undefined ? "Demo API key: created earlier (not stored in plain text)" : `Demo API key: ${apiKey}`,
    "",
    "Create an invoice:",
    `  curl -s -X POST ${base}/api/checkout/invoices -H 'Content-Type: application/json' -H 'X-Api-Key: ${
      apiKey ?? "<your key>"
    }' -d '{"amountUsd": 25.5, "productName": "T-shirt"}'`,
    "",
    "Walk it through its lifecycle (development simulator):",
    `  ${simulate} pay <invoiceId> --confirmations 1   (the invoice's default option, its whole amount)`,
    `  ${simulate} confirm <invoiceId> <transactionHash> 12   (the pay command prints the transaction hash)`,
    ""
  ].join("\n"))
})).pipe(Layer.provide([Accounts.layer, CheckoutSettingsRepo.layer]))
