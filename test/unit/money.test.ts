import { describe, expect, it } from "vitest"
import { formatAtomic, microsToNumber, parseAtomic, usdNumberToMicros } from "../../src/domain/Money.ts"
import { quoteAtomic } from "../../src/payments/OptionBuilder.ts"
import { usdValueOf } from "../../src/domain/Evidence.ts"

describe("money", () => {
  it("converts JSON numbers to micros exactly", () => {
    expect(usdNumberToMicros(0.1)).toBe(100_000n)
    expect(usdNumberToMicros(0.01)).toBe(10_000n)
    expect(usdNumberToMicros(19.99)).toBe(19_990_000n)
    expect(usdNumberToMicros(1e-7)).toBeUndefined()
    expect(usdNumberToMicros(1.005)).toBeUndefined()
    expect(usdNumberToMicros(-1)).toBeUndefined()
    expect(usdNumberToMicros(1e20, 2)).toBe(10n ** 26n)
  })

  it("formats and parses atomic amounts", () => {
    expect(formatAtomic(123_450_000n, 8)).toBe("1.2345")
    expect(formatAtomic(5n, 8)).toBe("0.00000005")
    expect(formatAtomic(0n, 6)).toBe("0")
    expect(parseAtomic("1.2345", 8)).toBe(123_450_000n)
    expect(parseAtomic("1.123456789", 8)).toBeUndefined()
    expect(microsToNumber(42_500_000n)).toBe(42.5)
  })

  it("quotes round up and pay exactly the invoice amount back", () => {
    const amount = 100_000_000n // 100 USD
    const btc = quoteAtomic(amount, 65_000_000_000n, 8) // 65,000 USD per BTC
    expect(btc).toBe(153_847n) // 0.00153847 BTC >= 100/65000
    expect(btc * 65_000_000_000n).toBeGreaterThanOrEqual(amount * 100_000_000n)
    expect(usdValueOf(btc, btc, amount)).toBe(amount)
    expect(quoteAtomic(amount, 1_000_000n, 6)).toBe(amount)
  })
})
