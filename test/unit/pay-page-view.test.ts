import { readdirSync, readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import type { PaymentOptionRecord } from "../../src/domain/Invoice.ts"
import { parseConfig } from "../../src/config/AppConfig.ts"
import { DEFAULT_EXPLORERS, explorersOf, transactionUrl } from "../../src/pay/Explorers.ts"

const explorersFrom = (env: Record<string, string>) => explorersOf(parseConfig(env).explorerUrls)
import { addressGroups, mayHaveRefunds, uriForAmount } from "../../src/pay/PayPageView.ts"

const HASH = `0x${"ab".repeat(32)}`

describe("the payment page's building blocks", () => {
  it("asks a wallet-contract forwarder for the same EIP-681 token transfer as the option builder writes", () => {
    const token = "0x833589fCD6eDb6E08f4c7C32D4f71b54bdA02913"
    const forwarder = "0x1111111111111111111111111111111111111111"
    const option = { railType: "wallet_contract", tokenContract: token, optionPayload: { chainId: 8453, contractAddress: forwarder } } as unknown as PaymentOptionRecord
    expect(uriForAmount(option, 20_000_000n)).toBe(`ethereum:${token}@8453/transfer?address=${forwarder}&uint256=20000000`)
  })

  it("links transactions to the public explorers by default", () => {
    const explorers = explorersFrom({})
    expect(explorers).toEqual(DEFAULT_EXPLORERS)
    expect(transactionUrl(explorers, "ethereum", HASH)).toBe(`https://etherscan.io/tx/${HASH}`)
    expect(transactionUrl(explorers, "arbitrum", HASH)).toBe(`https://arbiscan.io/tx/${HASH}`)
    expect(transactionUrl(explorers, "base", HASH)).toBe(`https://basescan.org/tx/${HASH}`)
    expect(transactionUrl(explorers, "solana", "5sig")).toBe("https://solscan.io/tx/5sig")
    expect(transactionUrl(explorers, "bitcoin", "ff00")).toBe("https://mempool.space/tx/ff00")
    expect(transactionUrl(explorers, "dogecoin", "ff00")).toBeUndefined()
  })

  it("takes each network's explorer from CHECKOUT_EXPLORER_URL_<NETWORK>: a {tx} template or a site root, and refuses anything else", () => {
    const explorers = explorersFrom({
      CHECKOUT_EXPLORER_URL_SOLANA: "https://solscan.io/tx/{tx}?cluster=devnet",
      CHECKOUT_EXPLORER_URL_ETHEREUM: "https://sepolia.etherscan.io/",
      CHECKOUT_EXPLORER_URL_BASE: ""
    })
    expect(transactionUrl(explorers, "solana", "5sig")).toBe("https://solscan.io/tx/5sig?cluster=devnet")
    expect(transactionUrl(explorers, "ethereum", HASH)).toBe(`https://sepolia.etherscan.io/tx/${HASH}`)
    expect(explorers.base).toBe(DEFAULT_EXPLORERS.base)
    expect(() => explorersFrom({ CHECKOUT_EXPLORER_URL_BITCOIN: "javascript:alert(1)//{tx}" })).toThrow(/CHECKOUT_EXPLORER_URL_BITCOIN must be an http\(s\) URL/)
    expect(() => explorersFrom({ CHECKOUT_EXPLORER_URL_ARBITRUM: "arbiscan.io" })).toThrow(/CHECKOUT_EXPLORER_URL_ARBITRUM/)
  })

  it("groups an address by four characters without changing it", () => {
    const evm = "0x9858EfFD232B4033E47d90003D41EC34EcaEda94"
    expect(addressGroups(evm)).toEqual(["0x", "9858", "EfFD", "232B", "4033", "E47d", "9000", "3D41", "EC34", "EcaE", "da94"])
    const bitcoin = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
    expect(addressGroups(bitcoin).join("")).toBe(bitcoin)
    expect(addressGroups(bitcoin).slice(0, -1).every((group) => group.length === 4)).toBe(true)
  })

  it("types the page's script against the API: no `any` in src/pay/browser", () => {
    const directory = join(import.meta.dirname, "..", "..", "src", "pay", "browser")
    for (const file of readdirSync(directory).filter((name) => name.endsWith(".ts"))) {
      const code = readFileSync(join(directory, file), "utf8").replace(/\/\*[\s\S]*?\*\/|\/\/.*$/gm, "")
      expect(code, file).not.toMatch(/(?::|\bas|<|,|\|)\s*any\b/)
    }
  })

  it("asks the refund endpoint only for an invoice that may have something to refund: overpaid and confirmed, or its exception closed", () => {
    const invoice = (status: "confirmed" | "expired" | "awaiting_payment", receivedMicros: bigint, exceptionStatus: "open" | "closed" | null = null) => ({
      status,
      amountMicros: 20_000_000n,
      receivedMicros,
      exceptionStatus
    })
    expect(mayHaveRefunds(invoice("confirmed", 25_000_000n))).toBe(true)
    expect(mayHaveRefunds(invoice("confirmed", 20_000_000n))).toBe(false)
    expect(mayHaveRefunds(invoice("expired", 5_000_000n, "closed"))).toBe(true)
    expect(mayHaveRefunds(invoice("expired", 5_000_000n, "open"))).toBe(false)
    expect(mayHaveRefunds(invoice("expired", 0n, "closed"))).toBe(false)
    expect(mayHaveRefunds(invoice("awaiting_payment", 0n))).toBe(false)
  })
})
