import { describe, expect, it } from "vitest"
import { formatAtomic, Micros, microsToNumber, parseAtomic, usdNumberToMicros } from "../../src/domain/Money.ts"
import { quoteAtomic } from "../../src/domain/Money.ts"
import { remainingAtomic, tally, usdValueOf } from "../../src/domain/Evidence.ts"

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
    const amount = Micros.make(100_000_000n) // 100 USD
    const btc = quoteAtomic(amount, 65_000_000_000n, 8) // 65,000 USD per BTC
    expect(btc).toBe(153_847n) // 0.00153847 BTC >= 100/65000
    expect(btc * 65_000_000_000n).toBeGreaterThanOrEqual(amount * 100_000_000n)
    expect(usdValueOf(btc, btc, amount)).toBe(amount)
    expect(quoteAtomic(amount, 1_000_000n, 6)).toBe(amount)
  })

  it("values the payments of one option together: the quote paid in parts is worth exactly the amount, a unit short is not", () => {
    const amount = Micros.make(40_000_000n)
    const quoted = 61_539n // 40 USD at 65,000 USD per BTC, rounded up
    const payment = (id: string, paymentOptionId: string, amountAtomic: bigint) => ({
      paymentOptionId,
      amountAtomic,
      quotedAtomic: quoted,
      confirmedAt: null,
      late: false,
      invalidatedAt: null,
      confirmations: 0,
      id
    })
    // Each half alone is worth a fraction of a micro-dollar more than it is credited.
    expect(usdValueOf(30_769n, quoted, amount) + usdValueOf(30_770n, quoted, amount)).toBeLessThan(amount)
    const parts = [payment("a", "btc", 30_769n), payment("b", "btc", 30_770n)]
    expect(tally(amount, parts)).toMatchObject({ receivedMicros: amount, total: "sufficient", onTime: "sufficient" })
    const short = [payment("a", "btc", 30_769n), payment("b", "btc", 30_769n)]
    expect(tally(amount, short)).toMatchObject({ total: "partial" })
    expect(tally(amount, short).receivedMicros).toBeLessThan(amount)
  })

  it("asks through each option for exactly what completes the invoice, whatever was paid through the others", () => {
    const amount = Micros.make(40_000_000n)
    const btc = { id: "btc", quotedAtomic: 61_539n }
    const usdc = { id: "usdc", quotedAtomic: 40_000_000n }
    const paid = (paymentOptionId: string, amountAtomic: bigint, quotedAtomic: bigint) => ({
      paymentOptionId,
      amountAtomic,
      quotedAtomic,
      confirmedAt: null,
      late: false,
      invalidatedAt: null,
      confirmations: 0
    })
    expect(remainingAtomic(amount, btc, [])).toBe(61_539n)
    const partBtc = [paid("btc", 30_769n, 61_539n)]
    expect(remainingAtomic(amount, btc, partBtc)).toBe(30_770n)
    // Through another option: the rest in USDC, and paying it completes the invoice exactly.
    const rest = remainingAtomic(amount, usdc, partBtc)
    expect(tally(amount, [...partBtc, paid("usdc", rest, usdc.quotedAtomic)]).total).toBe("sufficient")
    expect(tally(amount, [...partBtc, paid("usdc", rest - 1n, usdc.quotedAtomic)]).total).toBe("partial")
    expect(remainingAtomic(amount, usdc, [paid("usdc", 40_000_000n, 40_000_000n)])).toBe(0n)
  })
})
