import { ed25519 } from "@noble/curves/ed25519.js"
import { base58, base64 } from "@scure/base"
import { Effect } from "effect"
import type { Hex } from "viem"
import { isEvmNetwork, sameAddress } from "./RefundMessage.ts"

/** A signature the payer's wallet made over the refund message (RefundMessage.ts). */
export interface RefundSignature {
  /** EVM: the 65-byte EIP-191 `personal_sign` signature as 0x hex. Solana: the 64-byte ed25519 signature, base58 or base64. */
  readonly signature: string
  /** Who signed: required on Solana (the wallet's public key); on EVM optional (recovered from the signature, then compared). */
  readonly signer?: string | undefined
}

/** Why a signature cannot be checked: a 400 with this message. */
export type SignatureRefusal = { readonly refused: string }

/** The signer a valid signature proves, or why it is refused. */
export type SignatureCheck = { readonly signer: string } | SignatureRefusal

export const SIGNATURE_MESSAGES = {
  evmFormat: "signature must be a 65-byte EIP-191 signature as 0x hex",
  solanaFormat: "signature must be a 64-byte ed25519 signature (base58 or base64)",
  solanaSigner: "signer must be the Solana public key (base58) that signed",
  mismatch: "signature does not match the refund request and signer",
  notOffered: "Signed refund requests are not offered on bitcoin (BIP-322): send the request unsigned"
} as const

const refused = (message: string): SignatureRefusal => ({ refused: message })

const evmSigner = (message: string, { signature, signer }: RefundSignature) =>
  Effect.gen(function*() {
    if (!/^0x[0-9a-fA-F]{130}$/.test(signature)) return refused(SIGNATURE_MESSAGES.evmFormat)
    // viem loads on the first signed request, not at start (startup-imports.test.ts).
    const recovered = yield* Effect.tryPromise(async () => (await import("viem")).recoverMessageAddress({ message, signature: signature as Hex })).pipe(Effect.option)
    if (recovered._tag === "None") return refused(SIGNATURE_MESSAGES.evmFormat)
    if (signer !== undefined && !sameAddress("ethereum", signer, recovered.value)) return refused(SIGNATURE_MESSAGES.mismatch)
    return { signer: recovered.value }
  })

const decodeEither = (text: string): Uint8Array | undefined => {
  for (const codec of [base58, base64]) {
    try {
      return codec.decode(text)
    } catch {
      // Not this encoding: try the next.
    }
  }
  return undefined
}

const solanaSigner = (message: string, { signature, signer }: RefundSignature): SignatureCheck => {
  const key = signer === undefined ? undefined : decodeEither(signer)
  if (key === undefined || key.length !== 32) return refused(SIGNATURE_MESSAGES.solanaSigner)
  const bytes = decodeEither(signature)
  if (bytes === undefined || bytes.length !== 64) return refused(SIGNATURE_MESSAGES.solanaFormat)
  return verifies(bytes, new TextEncoder().encode(message), key) ? { signer: base58.encode(key) } : refused(SIGNATURE_MESSAGES.mismatch)
}

/** ed25519 verification; a key or signature that is not a curve point is simply not a match. */
const verifies = (signature: Uint8Array, message: Uint8Array, key: Uint8Array) => {
  try {
    return ed25519.verify(signature, message, key)
  } catch {
    return false
  }
}

/**
 * Who signed the refund message: EVM by EIP-191 recovery (an externally owned account; a contract
 * wallet's EIP-1271 signature is not checked), Solana by ed25519 verification against the signer's
 * key. Bitcoin is refused: BIP-322 is not offered (docs/decisions.md).
 */
export const signerOf = (network: string, message: string, signed: RefundSignature): Effect.Effect<SignatureCheck> => {
  if (isEvmNetwork(network)) return evmSigner(message, signed)
  if (network === "solana") return Effect.succeed(solanaSigner(message, signed))
  return Effect.succeed(refused(SIGNATURE_MESSAGES.notOffered))
}
