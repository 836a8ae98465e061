import { hmac } from "@noble/hashes/hmac.js"
import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"

const encoder = new TextEncoder()
const toBytes = (value: string | Uint8Array) => (typeof value === "string" ? encoder.encode(value) : value)

/** `X-Checkout-Signature`: lowercase hex HMAC-SHA256 of the raw body under the signing secret. */
export const signWebhook = (rawBody: string | Uint8Array, secret: string): string => bytesToHex(hmac(sha256, encoder.encode(secret), toBytes(rawBody)))

/**
 * For merchants: verifies a webhook's `X-Checkout-Signature` against the raw request body, in
 * constant time. Anything but exactly 64 hex characters (either case) is rejected.
 */
export const verifyWebhookSignature = (rawBody: string | Uint8Array, header: string | null | undefined, secret: string): boolean => {
  if (typeof header !== "string" || !/^[0-9a-fA-F]{64}$/.test(header)) return false
  const expected = signWebhook(rawBody, secret)
  const given = header.toLowerCase()
  let difference = 0
  for (let index = 0; index < 64; index++) difference |= expected.charCodeAt(index) ^ given.charCodeAt(index)
  return difference === 0
}
