import { ed25519 } from "@noble/curves/ed25519.js"
import { base58 } from "@scure/base"

export const PAYER_KEY_MESSAGE = "must be a base58 Solana public key (32 bytes on the ed25519 curve)"

/**
 * The bytes of a payer key the endpoint accepts: the canonical base58 of 32 bytes on the ed25519
 * curve (a key that can sign), as @solana/web3.js's `PublicKey` and `isOnCurve` judge it
 * (test/unit/payer-key.test.ts), without loading that library on the request schema's path.
 */
export const payerKeyBytes = (text: string): Uint8Array | undefined => {
  try {
    const bytes = base58.decode(text)
    if (bytes.length !== 32 || base58.encode(bytes) !== text) return undefined
    ed25519.Point.fromBytes(bytes)
    return bytes
  } catch {
    return undefined
  }
}
