import fc from "fast-check"
import { concat, encodeAbiParameters, getAddress, getContractAddress, type Hex, isAddress, keccak256 } from "viem"
import { describe, expect, it } from "vitest"
import { checksumAddress, create2Address, isEvmAddress } from "../../src/payments/EvmAddress.ts"
import { CANONICAL_FACTORY, CREATE2_DEPLOYER, Forwarder, ForwarderFactory, forwarderAddress, forwarderInitCode, forwarderSalt } from "../../src/payments/Forwarders.ts"

const hexBytes = (length: number) => fc.uint8Array({ minLength: length, maxLength: length }).map((bytes) => `0x${Buffer.from(bytes).toString("hex")}` as Hex)

/** Addresses as payers and merchants type them: lower case, checksummed, upper case, or with one letter's case flipped. */
const addressTexts = hexBytes(20).chain((lower) =>
  fc.oneof(
    fc.constant(lower),
    fc.constant(getAddress(lower)),
    fc.constant(`0x${lower.slice(2).toUpperCase()}`),
    fc.nat({ max: 39 }).map((at) => {
      const text = getAddress(lower)
      const char = text[2 + at]
      const flipped = char === char.toUpperCase() ? char.toLowerCase() : char.toUpperCase()
      return text.slice(0, 2 + at) + flipped + text.slice(3 + at)
    }),
    fc.constant(lower.slice(0, 41)),
    fc.constant(`${lower}0`),
    fc.constant(`0x${lower.slice(3)}g`)
  )
)

describe("EVM addresses without viem", () => {
  it("checksums, validates and refuses exactly as viem does", () => {
    fc.assert(fc.property(addressTexts, (text) => {
      expect(isEvmAddress(text)).toBe(isAddress(text))
      expect(isEvmAddress(text, { strict: false })).toBe(isAddress(text, { strict: false }))
      const ours = (() => {
        try {
          return checksumAddress(text)
        } catch {
          return "refused"
        }
      })()
      const viems = (() => {
        try {
          return getAddress(text)
        } catch {
          return "refused"
        }
      })()
      expect(ours).toBe(viems)
    }), { numRuns: 2_000 })
  })

  it("computes CREATE2 addresses as viem does", () => {
    fc.assert(fc.property(hexBytes(20), hexBytes(32), fc.uint8Array({ maxLength: 300 }), (from, salt, code) => {
      const bytecode = `0x${Buffer.from(code).toString("hex")}` as Hex
      expect(create2Address(from, salt, bytecode)).toBe(getContractAddress({ opcode: "CREATE2", from, salt, bytecode }))
    }), { numRuns: 300 })
  })

  it("derives the factory and each forwarder's counterfactual address as viem does", () => {
    expect(CANONICAL_FACTORY).toBe(getContractAddress({ opcode: "CREATE2", from: CREATE2_DEPLOYER, salt: `0x${"0".repeat(64)}`, bytecode: ForwarderFactory.bytecode }))
    fc.assert(fc.property(hexBytes(20), fc.uuid(), (recipientBytes, optionId) => {
      const recipient = getAddress(recipientBytes)
      const initCode = concat([Forwarder.bytecode, encodeAbiParameters([{ type: "address" }], [recipient])])
      expect(forwarderInitCode(recipient)).toBe(initCode)
      expect(forwarderAddress(CANONICAL_FACTORY, optionId, recipient)).toBe(
        getContractAddress({ opcode: "CREATE2", from: CANONICAL_FACTORY, salt: keccak256(Buffer.from(optionId)), bytecode: initCode })
      )
      expect(forwarderSalt(optionId)).toBe(keccak256(Buffer.from(optionId)))
    }), { numRuns: 100 })
    // A recipient's init-code hash is kept: its later forwarders (other option ids) must still be right.
    const recipient = getAddress(`0x${"ab".repeat(20)}`)
    const initCode = concat([Forwarder.bytecode, encodeAbiParameters([{ type: "address" }], [recipient])])
    fc.assert(fc.property(fc.uuid(), fc.boolean(), (optionId, lower) => {
      expect(forwarderAddress(CANONICAL_FACTORY, optionId, lower ? recipient.toLowerCase() as typeof recipient : recipient)).toBe(
        getContractAddress({ opcode: "CREATE2", from: CANONICAL_FACTORY, salt: keccak256(Buffer.from(optionId)), bytecode: initCode })
      )
    }), { numRuns: 50 })
  })
})
