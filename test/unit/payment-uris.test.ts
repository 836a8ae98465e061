import { PublicKey } from "@solana/web3.js"
import { parseURL, type TransferRequestURL } from "@solana/pay"
import { decode as decodeBip21 } from "bip21"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { DEMO_KEYS } from "../../src/demo/DemoMerchant.ts"
import { formatAtomic } from "../../src/domain/Money.ts"
import { quoteAtomic } from "../../src/domain/Money.ts"
import { buildOption } from "../../src/payments/OptionBuilder.ts"
import type { RailSettingsShape } from "../../src/payments/PaymentMethod.ts"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { railSettingsOf } from "../../src/payments/RailSettings.ts"
import { decodeQrSvg } from "../support/QrRaster.ts"
import { InvoiceId, PaymentOptionId } from "../../src/domain/Ids.ts"
import { Micros } from "../../src/domain/Money.ts"

const rails: RailSettingsShape = railSettingsOf(parseConfig({}).rails, "checkout", false)
const invoiceId = InvoiceId.make("0f2f6c4e-8e0f-4bd3-9f56-1c8a1c3e5d11")

const build = (method: Parameters<typeof buildOption>[0]["method"], amountMicros = Micros.make(25_500_000n), rateMicros = 1_000_000n, derivationIndex?: number) =>
  buildOption({
    invoiceId,
    amountMicros,
    label: "Demo Store & Co",
    method,
    optionId: PaymentOptionId.make(crypto.randomUUID()),
    isDefault: true,
    position: 0,
    rateMicros,
    derivationIndex
  }, rails)

describe("payment URIs and QR codes", () => {
  it("Solana Pay URIs parse back with @solana/pay", async () => {
    const option = await build({ id: "m", network: "solana", assetCode: "USDC", railType: "address_transfer", isDefault: true, recipientAddress: DEMO_KEYS.solanaRecipient,
      xpub: null })
    const parsed = parseURL(option.paymentUri!) as TransferRequestURL
    expect(parsed.recipient.toBase58()).toBe(DEMO_KEYS.solanaRecipient)
    expect(parsed.amount?.toString()).toBe("25.5")
    expect(parsed.splToken?.toBase58()).toBe("EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v")
    expect(parsed.reference?.map((key: PublicKey) => key.toBase58())).toEqual([option.optionPayload!.reference])
    expect(parsed.label).toBe("Demo Store & Co")
    expect(parsed.memo).toBe(`checkout:${invoiceId}:${option.id}`)
    expect(option.optionPayload).toMatchObject({ methodType: "solana", amountAtomic: "25500000", decimals: 6, mintAddress: "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v" })
    expect(decodeQrSvg(option.qrCode!)).toBe(option.paymentUri)
  })

  it("BIP21 URIs parse back with an independent parser, with at most 8 decimals", async () => {
    const option = await build(
      { id: "m", network: "bitcoin", assetCode: "BTC", railType: "address_transfer", isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.bitcoinZpub },
      Micros.make(100_000_000n),
      65_000_000_000n,
      0
    )
    const parsed = decodeBip21(option.paymentUri!)
    expect(parsed.address).toBe("bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu")
    expect(parsed.options.amount).toBe(0.00153847)
    expect(option.quotedAtomic).toBe(153_847n)
    expect(decodeQrSvg(option.qrCode!)).toBe(option.paymentUri)
    expect(option.optionPayload).toEqual({ railType: "address_transfer", requiredConfirmations: 2 })
  })

  it("EIP-681 URIs carry the token, chain, deposit address and atomic amount; wallet-contract options carry the payload", async () => {
    const transfer = await build({ id: "m", network: "base", assetCode: "USDC", railType: "address_transfer", isDefault: true, recipientAddress: null, xpub: DEMO_KEYS.evmXpub },
      Micros.make(25_500_000n), 1_000_000n, 3)
    expect(transfer.paymentUri).toBe(`ethereum:0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913@8453/transfer?address=${transfer.destinationAddress}&uint256=25500000`)
    expect(decodeQrSvg(transfer.qrCode!)).toBe(transfer.paymentUri)
    const contract = await build({ id: "m", network: "ethereum", assetCode: "USDT", railType: "wallet_contract", isDefault: true, recipientAddress: DEMO_KEYS.evmRecipient,
      xpub: null })
    expect(contract.paymentUri).toBeNull()
    expect(contract.qrCode).toBeNull()
    expect(Object.keys(contract.optionPayload!).sort()).toEqual(
      ["chainId", "contractAddress", "decimals", "paymentAmountAtomic", "railType", "recipient", "requiredConfirmations", "tokenContract"]
    )
    expect(contract.optionPayload).toMatchObject({ chainId: 1, paymentAmountAtomic: "25500000", recipient: DEMO_KEYS.evmRecipient })
  })
})

describe("quotes", () => {
  it("never under-cover the invoice amount", () => {
    fc.assert(fc.property(
      fc.bigInt({ min: 10_000n, max: 1_000_000_000_000_000n }),
      fc.bigInt({ min: 1_000_000n, max: 500_000_000_000n }),
      fc.constantFrom(6, 8),
      (amountMicros, rateMicros, decimals) => {
        const atomic = quoteAtomic(Micros.make(amountMicros), rateMicros, decimals)
        const unit = 10n ** BigInt(decimals)
        // value of the quote in micro-dollars covers the amount, and one unit less would not
        expect(atomic * rateMicros >= amountMicros * unit).toBe(true)
        expect((atomic - 1n) * rateMicros < amountMicros * unit).toBe(true)
        expect(formatAtomic(atomic, decimals).split(".")[1]?.length ?? 0).toBeLessThanOrEqual(decimals)
      }
    ))
  })
})
