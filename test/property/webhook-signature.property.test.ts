import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { signWebhook, verifyWebhookSignature } from "../../src/webhooks/Signature.ts"

const HEX = "0123456789abcdef"
const anyBody = fc.oneof(fc.uint8Array({ maxLength: 2048 }), fc.string({ unit: "grapheme", maxLength: 512 }).map((text) => new TextEncoder().encode(text)))
const anySecret = fc.string({ unit: "binary", maxLength: 128 })

/** Any character other than `original`, also counting its other case as the same hex digit. */
const otherCharacter = (original: string) =>
  fc.integer({ min: 0, max: 0xffff }).map((code) => String.fromCharCode(code)).filter((char) => char.toLowerCase() !== original.toLowerCase())

describe("webhook signatures (properties)", () => {
  it("verify for any body and any secret, in either case", () => {
    fc.assert(fc.property(anyBody, anySecret, (body, secret) => {
      const signature = signWebhook(body, secret)
      expect(signature).toMatch(/^[0-9a-f]{64}$/)
      expect(verifyWebhookSignature(body, signature, secret)).toBe(true)
      expect(verifyWebhookSignature(body, signature.toUpperCase(), secret)).toBe(true)
    }), { numRuns: 300 })
  })

  it("fail for any change of one byte of the body", () => {
    const changed = anyBody.filter((body) => body.length > 0).chain((body) => fc.tuple(fc.constant(body), fc.nat({ max: body.length - 1 }), fc.integer({ min: 1, max: 255 })))
    fc.assert(fc.property(changed, anySecret, ([body, position, delta], secret) => {
      const signature = signWebhook(body, secret)
      const tampered = body.slice()
      tampered[position] = (tampered[position] + delta) % 256
      expect(verifyWebhookSignature(tampered, signature, secret)).toBe(false)
    }), { numRuns: 300 })
  })

  it("fail for any change of one character of the signature (other than its case)", () => {
    const changed = fc.tuple(anyBody, anySecret, fc.nat({ max: 63 })).chain(([body, secret, position]) => {
      const signature = signWebhook(body, secret)
      return fc.tuple(fc.constant(body), fc.constant(secret), fc.constant(signature), fc.constant(position), otherCharacter(signature[position]))
    })
    fc.assert(fc.property(changed, ([body, secret, signature, position, replacement]) => {
      const tampered = signature.slice(0, position) + replacement + signature.slice(position + 1)
      expect(verifyWebhookSignature(body, tampered, secret)).toBe(false)
    }), { numRuns: 300 })
  })

  it("fail for any other hex digest of the right length", () => {
    fc.assert(fc.property(anyBody, anySecret, fc.string({ unit: fc.constantFrom(...HEX), minLength: 64, maxLength: 64 }), (body, secret, guess) => {
      fc.pre(guess !== signWebhook(body, secret))
      expect(verifyWebhookSignature(body, guess, secret)).toBe(false)
    }), { numRuns: 300 })
  })
})
