import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"

export const API_KEY_PREFIX = "svc_live_"

/** A new raw key: the live prefix and 32 random bytes, base64url-encoded (43 characters). */
export const generateApiKey = (): string => API_KEY_PREFIX + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")

export const hashApiKey = (rawKey: string): string => bytesToHex(sha256(new TextEncoder().encode(rawKey)))

export const keyPrefixOf = (rawKey: string): string => rawKey.slice(0, 12)

/** Shape check before any lookup: the prefix and 43 base64url characters. */
export const looksLikeApiKey = (rawKey: string): boolean => /^svc_live_[A-Za-z0-9_-]{43}$/.test(rawKey)

/** Compares two equal-length hex digests without an early exit. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let index = 0; index < a.length; index++) difference |= a.charCodeAt(index) ^ b.charCodeAt(index)
  return difference === 0
}
