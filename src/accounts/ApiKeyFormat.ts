import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"

export const API_KEY_PREFIX = "svc_live_"
export const TEST_API_KEY_PREFIX = "svc_test_"

/** A new raw key: the mode's prefix and 32 random bytes, base64url-encoded (43 characters). */
export const generateApiKey = (mode: "live" | "test" = "live"): string =>
  (mode === "test" ? TEST_API_KEY_PREFIX : API_KEY_PREFIX) + Buffer.from(crypto.getRandomValues(new Uint8Array(32))).toString("base64url")

export const hashApiKey = (rawKey: string): string => bytesToHex(sha256(new TextEncoder().encode(rawKey)))

export const keyPrefixOf = (rawKey: string): string => rawKey.slice(0, 12)

/** Shape check before any lookup: a mode's prefix and 43 base64url characters (the mode itself is the stored key's). */
export const looksLikeApiKey = (rawKey: string): boolean => /^svc_(?:live|test)_[A-Za-z0-9_-]{43}$/.test(rawKey)

/** Compares two equal-length hex digests without an early exit. */
export const constantTimeEqual = (a: string, b: string): boolean => {
  if (a.length !== b.length) return false
  let difference = 0
  for (let index = 0; index < a.length; index++) difference |= a.charCodeAt(index) ^ b.charCodeAt(index)
  return difference === 0
}
