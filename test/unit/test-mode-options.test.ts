import { bech32 } from "@scure/base"
import { describe, expect, it } from "vitest"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { InvoiceId, PaymentOptionId } from "../../src/domain/Ids.ts"
import { Micros } from "../../src/domain/Money.ts"
import { buildOption } from "../../src/payments/OptionBuilder.ts"
import type { PaymentMethod } from "../../src/payments/PaymentMethod.ts"
import { railSettingsOf } from "../../src/payments/RailSettings.ts"

// Issue #55 item 5: a test invoice's options name the testnets, so that a wallet never offers to pay
// one with real funds: sepolia, arbitrum sepolia and base sepolia chain ids in EIP-681 URIs, the
// testnet tokens where configured, and signet (tb1) bitcoin addresses.
const SEPOLIA_USDC = "0x1c7D4B196Cb0C7B01d743Fbc6116a902379C7238"
const DEVNET_USDC = "4zMMC9srt5Ri5X14GAgXhaHii3GnPAEERYPJgZJDncDU"
const config = parseConfig({ CHECKOUT_TEST_TOKEN_ETHEREUM_USDC: SEPOLIA_USDC, CHECKOUT_TEST_TOKEN_SOLANA_USDC: DEVNET_USDC })
const rails = railSettingsOf(config.rails, "checkout", false)

const build = (method: PaymentMethod, livemode: boolean | undefined, derivationIndex = 3) =>
  buildOption({
    invoiceId: InvoiceId.make("0f2f6c4e-8e0f-4bd3-9f56-1c8a1c3e5d11"),
    amountMicros: Micros.make(10_000_000n),
    label: "Shop",
    method,
    optionId: PaymentOptionId.make(crypto.randomUUID()),
    isDefault: true,
    position: 0,
    rateMicros: method.assetCode === "BTC" ? 50_000_000_000n : 1_000_000n,
    derivationIndex,
    livemode
  }, rails)

const evm = (network: "ethereum" | "arbitrum" | "base", railType: "address_transfer" | "wallet_contract"): PaymentMethod => ({
  id: "m",
  network,
  assetCode: "USDC",
  railType,
  isDefault: true,
  recipientAddress: railType === "wallet_contract" ? DEMO_KEYS.evmRecipient : null,
  xpub: railType === "address_transfer" ? DEMO_KEYS.evmXpub : null
})

describe("a test invoice's payment options", () => {
  it("name the testnet chain ids in EIP-681 URIs and payloads; a live invoice's the mainnets'", () => {
    const expected = { ethereum: [11155111, 1], arbitrum: [421614, 42161], base: [84532, 8453] } as const
    for (const network of ["ethereum", "arbitrum", "base"] as const) {
      const [testnet, mainnet] = expected[network]
      const test = build(evm(network, "address_transfer"), false)
      expect(test.paymentUri).toContain(`@${testnet}/transfer`)
      expect(test.optionPayload).toMatchObject({ chainId: testnet })
      expect(build(evm(network, "wallet_contract"), false).optionPayload).toMatchObject({ chainId: testnet })
      for (const live of [true, undefined]) {
        expect(build(evm(network, "address_transfer"), live).paymentUri).toContain(`@${mainnet}/transfer`)
        expect(build(evm(network, "wallet_contract"), live).optionPayload).toMatchObject({ chainId: mainnet })
      }
    }
  })

  it("use the configured testnet token (else the live one), and never the testnet token for a live invoice", () => {
    expect(build(evm("ethereum", "address_transfer"), false).tokenContract).toBe(SEPOLIA_USDC)
    expect(build(evm("ethereum", "address_transfer"), true).tokenContract).toBe(rails.tokens["ethereum:USDC"])
    expect(build(evm("base", "address_transfer"), false).tokenContract).toBe(rails.tokens["base:USDC"])
    const solana: PaymentMethod = { id: "s", network: "solana", assetCode: "USDC", railType: "address_transfer", isDefault: true, recipientAddress: DEMO_KEYS.solanaRecipient,
      xpub: null }
    expect(build(solana, false).paymentUri).toContain(`spl-token=${DEVNET_USDC}`)
    expect(build(solana, true).paymentUri).toContain(`spl-token=${rails.tokens["solana:USDC"]}`)
  })

  it("pay bitcoin to a signet (tb1) address of the same key, not the pool's mainnet address", () => {
    const bitcoin: PaymentMethod = { id: "b", network: "bitcoin", assetCode: "BTC", railType: "address_transfer", isDefault: true, recipientAddress: null,
      xpub: DEMO_KEYS.bitcoinZpub }
    const live = build(bitcoin, true, 0)
    const test = buildOption({ ...requestOf(bitcoin), knownAddress: live.destinationAddress!, livemode: false }, rails)
    expect(live.destinationAddress).toMatch(/^bc1q/)
    expect(test.destinationAddress).toMatch(/^tb1q/)
    expect(test.paymentUri).toMatch(/^bitcoin:tb1q/)
    expect(bech32.decode(test.destinationAddress as `${string}1${string}`).words).toEqual(bech32.decode(live.destinationAddress as `${string}1${string}`).words)
  })
})

const requestOf = (method: PaymentMethod) => ({
  invoiceId: InvoiceId.make("0f2f6c4e-8e0f-4bd3-9f56-1c8a1c3e5d11"),
  amountMicros: Micros.make(10_000_000n),
  label: "Shop",
  method,
  optionId: PaymentOptionId.make(crypto.randomUUID()),
  isDefault: true,
  position: 0,
  rateMicros: 50_000_000_000n,
  derivationIndex: 0
})
