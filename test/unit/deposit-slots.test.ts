import { describe, expect, it } from "vitest"
import { depositSlots } from "../../src/payments/DepositSlots.ts"

describe("deposit slots", () => {
  it("shares one index across networks and never within a network", () => {
    const { counts, offsets } = depositSlots([
      { id: "arbitrum-usdt", xpub: "A", network: "arbitrum" },
      { id: "base-usdc", xpub: "A", network: "base" },
      { id: "base-usdt", xpub: "A", network: "base" },
      { id: "ethereum-usdc", xpub: "B", network: "ethereum" }
    ])
    expect(Object.fromEntries(counts)).toEqual({ A: 2, B: 1 })
    expect(Object.fromEntries(offsets)).toEqual({ "arbitrum-usdt": 0, "base-usdc": 0, "base-usdt": 1, "ethereum-usdc": 0 })
  })

  it("reserves nothing for no options", () => {
    expect(depositSlots([]).counts.size).toBe(0)
  })
})
