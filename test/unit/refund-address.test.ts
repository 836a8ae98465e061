import { ed25519 } from "@noble/curves/ed25519.js"
import { secp256k1 } from "@noble/curves/secp256k1.js"
import { Address, NETWORK, p2pk, p2pkh, p2sh, p2tr, p2wpkh, p2wsh } from "@scure/btc-signer"
import { base58 } from "@scure/base"
import { parseURL, type TransferRequestURL } from "@solana/pay"
import { decode as decodeBip21 } from "bip21"
import { describe, expect, it } from "vitest"
import { InvoiceId } from "../../src/domain/Ids.ts"
import { paymentRequestOf, refundUri } from "../../src/refunds/PaymentRequest.ts"
import { burnAddressRefusal, invalidRefundAddressMessage, refundDestination } from "../../src/refunds/RefundAddress.ts"
import { decodeQrSvg } from "../support/QrRaster.ts"

const CHECKSUMMED = "0x5aAeb6053F3E94C9b9A09f33669435E7Ef1BeAed"

describe("refund addresses", () => {
  it("EVM: 0x and 40 hex digits, a mixed-case one only with a valid EIP-55 checksum", () => {
    for (const network of ["ethereum", "arbitrum", "base"]) {
      expect(refundDestination(network, CHECKSUMMED)).toEqual({ address: CHECKSUMMED, watchKey: CHECKSUMMED.toLowerCase() })
      // All lower or all upper case carries no checksum: accepted, stored checksummed.
      expect(refundDestination(network, CHECKSUMMED.toLowerCase())).toEqual({ address: CHECKSUMMED, watchKey: CHECKSUMMED.toLowerCase() })
      expect(refundDestination(network, `0x${CHECKSUMMED.slice(2).toUpperCase()}`)?.address).toBe(CHECKSUMMED)
      // One letter in the wrong case breaks the checksum.
      expect(refundDestination(network, CHECKSUMMED.replace("BeAed", "beAed"))).toBeUndefined()
      expect(refundDestination(network, CHECKSUMMED.slice(0, -1))).toBeUndefined()
      expect(refundDestination(network, CHECKSUMMED.replace("0x", "0X"))).toBeUndefined()
      expect(refundDestination(network, `${CHECKSUMMED}00`)).toBeUndefined()
      expect(refundDestination(network, CHECKSUMMED.replace("a", "g"))).toBeUndefined()
    }
  })

  it("solana: the canonical base58 of a 32-byte key on the ed25519 curve", () => {
    const key = base58.encode(ed25519.getPublicKey(ed25519.utils.randomSecretKey()))
    expect(refundDestination("solana", key)).toEqual({ address: key, watchKey: key })
    expect(refundDestination("solana", key.slice(0, -2))).toBeUndefined()
    expect(refundDestination("solana", `${key}1`)).toBeUndefined()
    expect(refundDestination("solana", key.replace(/[1-9A-HJ-NP-Za-km-z]$/, "0"))).toBeUndefined()
    // 32 bytes off the curve (what an associated token account is): not a wallet.
    let offCurve: string | undefined
    for (let attempt = 0; offCurve === undefined && attempt < 1000; attempt++) {
      const bytes = crypto.getRandomValues(new Uint8Array(32))
      try {
        ed25519.Point.fromBytes(bytes)
      } catch {
        offCurve = base58.encode(bytes)
      }
    }
    expect(offCurve).toBeDefined()
    expect(refundDestination("solana", offCurve!)).toBeUndefined()
  })

  it("bitcoin: a mainnet address with a valid checksum, bech32 kept in lower case", () => {
    const segwit = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
    expect(refundDestination("bitcoin", segwit)).toEqual({ address: segwit, watchKey: segwit })
    expect(refundDestination("bitcoin", segwit.toUpperCase())).toEqual({ address: segwit, watchKey: segwit })
    for (const address of ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2", "3J98t1WpEZ73CNmQviecrnyiWrnqRhWNLy", "bc1p5d7rjq7g6rdk2yhzks9smlaqtedr4dekq08ge8ztwac72sfr9rusxg3297"]) {
      expect(refundDestination("bitcoin", address)?.address).toBe(address)
    }
    // Bad checksums.
    expect(refundDestination("bitcoin", "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdr")).toBeUndefined()
    expect(refundDestination("bitcoin", "1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN3")).toBeUndefined()
    // Testnet addresses are refused.
    for (const testnet of ["tb1qw508d6qejxtdg4y5r3zarvary0c5xw7kxpjzsx", "mipcBbFg9gMiCh81Kj8tqqdgoZub1ZJRfn", "2MzQwSSnBHWHqSAqtTVQ6v47XtaisrJa1Vc"]) {
      expect(refundDestination("bitcoin", testnet)).toBeUndefined()
    }
  })

  it("bitcoin: accepts exactly what @scure/btc-signer's mainnet Address decodes, in its canonical form", () => {
    const canonical = (text: string) => {
      try {
        return Address(NETWORK).encode(Address(NETWORK).decode(text))
      } catch {
        return undefined
      }
    }
    const samples: Array<string> = []
    for (let i = 0; i < 20; i++) {
      const key = secp256k1.getPublicKey(secp256k1.utils.randomSecretKey(), true)
      const inner = p2wpkh(key)
      const produced = [p2pkh(key).address!, p2wpkh(key).address!, p2sh(inner).address!, p2wsh(p2pk(key)).address!, p2tr(key.subarray(1)).address!]
      for (const address of produced) {
        samples.push(address, address.toUpperCase(), address.slice(0, -1), `${address.slice(0, -1)}${address.at(-1) === "q" ? "p" : "q"}`)
      }
      // The other network's encoding of the same keys.
      samples.push(p2wpkh(key, { ...NETWORK, bech32: "tb", pubKeyHash: 0x6f, scriptHash: 0xc4 }).address!)
      samples.push(p2pkh(key, { ...NETWORK, bech32: "tb", pubKeyHash: 0x6f, scriptHash: 0xc4 }).address!)
    }
    for (const sample of samples) expect(refundDestination("bitcoin", sample)?.address, sample).toBe(canonical(sample))
  })

  it("refuses any address on a network without refunds, and over-long text", () => {
    expect(refundDestination("tron", CHECKSUMMED)).toBeUndefined()
    expect(refundDestination("ethereum", `0x${"a".repeat(200)}`)).toBeUndefined()
    expect(invalidRefundAddressMessage("bitcoin")).toBe("refundAddress must be a valid bitcoin address")
  })
})

describe("refund payment requests", () => {
  const invoiceId = InvoiceId.make("7b0c6f2e-8d4e-4a57-9d63-3a3c7f0a1b2c")
  const base = { invoiceId, decimals: 6, amountAtomic: 1_500_000n, reference: null }

  it("EVM: an EIP-681 transfer of the token to the refund address, in atomic units, on the network's chain", () => {
    const token = "0xA0b86991c6218b36c1d19D4a2e9Eb0cE3606eB48"
    expect(refundUri({ ...base, network: "ethereum", tokenContract: token, refundAddress: CHECKSUMMED })).toBe(
      `ethereum:${token}@1/transfer?address=${CHECKSUMMED}&uint256=1500000`
    )
    expect(refundUri({ ...base, network: "base", tokenContract: token, refundAddress: CHECKSUMMED })).toContain("@8453/transfer?")
    const request = paymentRequestOf({ ...base, network: "arbitrum", tokenContract: token, refundAddress: CHECKSUMMED })
    expect(request).toMatchObject({ uri: expect.stringContaining("@42161/transfer?"), recipient: CHECKSUMMED, tokenContract: token, reference: null })
    expect(decodeQrSvg(request.qrCode)).toBe(request.uri)
  })

  it("solana: Solana Pay with the amount in whole units, the mint, the refund's reference, label and memo", () => {
    const recipient = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
    const reference = "Fh1y4a1s5JcWq7QmU3kJ6f9xH3K5JgL8f2nE1QHh8rSx"
    const mint = "EPjFWdd5AufqSSqeM2qN1xzybapC8G4wEGGkZwyTDt1v"
    const uri = refundUri({ ...base, network: "solana", tokenContract: mint, refundAddress: recipient, reference })
    expect(uri).toBe(`solana:${recipient}?amount=1.5&spl-token=${mint}&reference=${reference}&label=Refund&memo=Refund%20${invoiceId}`)
    // What a Solana Pay wallet reads from it.
    const parsed = parseURL(uri) as TransferRequestURL
    expect(parsed.recipient.toBase58()).toBe(recipient)
    expect(parsed.amount?.toString()).toBe("1.5")
    expect(parsed.splToken?.toBase58()).toBe(mint)
    expect(parsed.reference?.map((key) => key.toBase58())).toEqual([reference])
    expect(parsed.label).toBe("Refund")
    expect(parsed.memo).toBe(`Refund ${invoiceId}`)
  })

  it("bitcoin: BIP21 with the amount in BTC", () => {
    const uri = refundUri({ ...base, network: "bitcoin", decimals: 8, tokenContract: null, refundAddress: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", amountAtomic: 12_345n })
    expect(uri).toBe("bitcoin:bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq?amount=0.00012345")
    expect(decodeBip21(uri)).toMatchObject({ address: "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", options: { amount: 0.00012345 } })
  })
})

describe("EVM refund addresses nobody can spend from (#52)", () => {
  const refusal = (address: string) => burnAddressRefusal("base", refundDestination("base", address)!)
  const BURN = "refundAddress must not be a burn or system address"

  it("refuses the whole precompile and system range below 2^16: P256VERIFY at 0x…0100, 0x…ffff, the zero address, 0x…dEaD", () => {
    for (const address of ["0x0000000000000000000000000000000000000100", "0x000000000000000000000000000000000000ffff", `0x${"0".repeat(40)}`,
      "0x000000000000000000000000000000000000dEaD"])
    {
      expect(refusal(address), address).toBe(BURN)
    }
    expect(refusal("0x0000000000000000000000000000000000010000")).toBeUndefined()
  })

  it("refuses the known dead patterns: 0xdEaD0000…42069 and the OP stack's 0xdeaddead… system addresses", () => {
    expect(refusal("0xdEAD000000000000000042069420694206942069")).toBe(BURN)
    expect(refusal("0xDeaDDEaDDeAdDeAdDEAdDEaddeAddEAdDEAd0001")).toBe(BURN)
    expect(refusal("0xdeaddeaddeaddeaddeaddeaddeaddeaddead0000")).toBe(BURN)
    expect(refusal(CHECKSUMMED)).toBeUndefined()
    expect(refusal("0xdead000000000000000042069420694206942068")).toBeUndefined()
  })
})
