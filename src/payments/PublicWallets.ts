import { sha256 } from "@noble/hashes/sha2.js"
import { base58 } from "@scure/base"
import type { MethodInput } from "./CheckoutSettingsRepo.ts"

/**
 * The demo's wallets (src/demo/DemoMerchant.ts takes them from here): account keys and the first
 * address of the BIP39 test mnemonic "abandon ... about", whose private keys everyone has, and a
 * Solana recipient derived from a public text. Production refuses them in a merchant's methods.
 */
export const PUBLIC_TEST_WALLETS = {
  bitcoinZpub: "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs",
  evmXpub: "xpub6DCoCpSuQZB2jawqnGMEPS63ePKWkwWPH4TU45Q7LPXWuNd8TMtVxRrgjtEshuqpK3mdhaWHPFsBngh5GFZaM6si3yZdUsT8ddYM3PwnATt",
  evmRecipient: "0x9858EfFD232B4033E47d90003D41EC34EcaEda94",
  solanaRecipient: base58.encode(sha256(new TextEncoder().encode("checkout-demo-solana-recipient")))
} as const

/** An extended key without its version bytes: the same key written as xpub or zpub compares equal. */
const keyBody = (extendedKey: string): string => {
  try {
    return base58.encode(base58.decode(extendedKey).slice(4, 78))
  } catch {
    return extendedKey
  }
}

const PUBLIC_KEYS = new Set([PUBLIC_TEST_WALLETS.bitcoinZpub, PUBLIC_TEST_WALLETS.evmXpub].map(keyBody))
const REFUSED = "It is refused when CHECKOUT_ENV=production; use your own wallet"
const WHY = `a public demo wallet (BIP39 test mnemonic "abandon ... about") whose keys anyone has: anyone could take the funds. ${REFUSED}`
const WHY_SOLANA = `the demo's Solana recipient, derived from a public text: no one holds its key, so funds sent there are lost. ${REFUSED}`
const PUBLIC_ADDRESSES = new Map([[PUBLIC_TEST_WALLETS.evmRecipient.toLowerCase(), WHY], [PUBLIC_TEST_WALLETS.solanaRecipient.toLowerCase(), WHY_SOLANA]])

/** The first method that pays into a public demo wallet, as a 400 message naming the field, or undefined. */
export const publicWalletProblem = (methods: ReadonlyArray<MethodInput>): string | undefined => {
  for (const [index, method] of methods.entries()) {
    if (method.xpub !== null && PUBLIC_KEYS.has(keyBody(method.xpub))) return `paymentMethods[${index}].xpub is ${WHY}`
    const why = method.recipientAddress === null ? undefined : PUBLIC_ADDRESSES.get(method.recipientAddress.toLowerCase())
    if (why !== undefined) return `paymentMethods[${index}].recipientAddress is ${why}`
  }
  return undefined
}
