import { PublicKey } from "@solana/web3.js"
import { base58 } from "@scure/base"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { payerKeyBytes } from "../../src/chains/solana/PayerKey.ts"

/** web3.js's judgement, as the endpoint made it before: a canonical 32-byte key on the curve. */
const web3Accepts = (text: string): boolean => {
  try {
    const key = new PublicKey(text)
    return key.toBase58() === text && PublicKey.isOnCurve(key.toBytes())
  } catch {
    return false
  }
}

const texts = fc.oneof(
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => base58.encode(bytes)),
  fc.uint8Array({ minLength: 30, maxLength: 34 }).map((bytes) => base58.encode(bytes)),
  fc.uint8Array({ minLength: 32, maxLength: 32 }).map((bytes) => `1${base58.encode(bytes)}`),
  // y at or above the field prime, with either sign bit: non-canonical encodings
  fc.integer({ min: 0xed, max: 0xff }).chain((low) =>
    fc.boolean().map((sign) => base58.encode(Uint8Array.from({ length: 32 }, (_, i) => i === 0 ? low : i === 31 ? sign ? 0xff : 0x7f : 0xff)))
  ),
  fc.string({ maxLength: 50 })
)

describe("payer keys without web3.js", () => {
  it("accepts and refuses exactly the keys web3.js does", () => {
    fc.assert(fc.property(texts, (text) => {
      expect(payerKeyBytes(text) !== undefined).toBe(web3Accepts(text))
    }), { numRuns: 3_000 })
  })

  it("accepts a real wallet key and refuses an off-curve one", () => {
    const wallet = "9WzDXwBbmkg8ZTbNMqUxvQRAyrZzDsGYdLVL9zYtAWWM"
    expect(web3Accepts(wallet)).toBe(true)
    expect(payerKeyBytes(wallet)).toEqual(new PublicKey(wallet).toBytes())
    const programDerived = PublicKey.findProgramAddressSync([Buffer.from("x")], new PublicKey(wallet))[0].toBase58()
    expect(payerKeyBytes(programDerived)).toBeUndefined()
  })
})
