import { Schema } from "effect"

/** USD is held internally as integer micro-dollars (1 USD = 1_000_000 micros). */
export const Micros = Schema.BigInt.pipe(Schema.brand("Micros"))
export type Micros = typeof Micros.Type

export const MICROS_PER_USD = 1_000_000n

/** Exact conversion of a decimal string with at most 6 fraction digits to micros. */
export const usdStringToMicros = (text: string): Micros | undefined => {
  const match = /^(\d+)(?:\.(\d{1,6}))?$/.exec(text)
  if (match === null) return undefined
  const [, whole, fraction = ""] = match
  return Micros.make(BigInt(whole) * MICROS_PER_USD + BigInt(fraction.padEnd(6, "0")))
}

/** An amount in whole cents (the request schema checks it has at most 2 decimals) as micros. */
export const centsToMicros = (value: number): Micros => Micros.make(BigInt(Math.round(value * 100)) * 10_000n)

/**
 * Converts a JSON number to micros through its shortest decimal representation, so 0.1 is
 * exactly 100000 micros. Returns undefined for more than `maxDecimals` fraction digits.
 */
export const usdNumberToMicros = (value: number, maxDecimals = 2): Micros | undefined => {
  if (!Number.isFinite(value) || value < 0) return undefined
  const text = decimalText(value)
  const fraction = text.split(".")[1] ?? ""
  if (fraction.length > maxDecimals) return undefined
  return usdStringToMicros(text)
}

const decimalText = (value: number): string => {
  const text = String(value)
  if (!/e/i.test(text)) return text
  return value.toFixed(20).replace(/\.?0+$/, "")
}

/** Micros as a JSON number: exact for every amount below 2^53 micros (about 9 billion USD). */
export const microsToNumber = (micros: bigint): number => Number(formatAtomic(micros, 6))

/** Formats an integer amount of smallest units as a decimal string without trailing zeros. */
export const formatAtomic = (atomic: bigint, decimals: number): string => {
  const negative = atomic < 0n
  const digits = (negative ? -atomic : atomic).toString().padStart(decimals + 1, "0")
  const whole = digits.slice(0, digits.length - decimals)
  const fraction = digits.slice(digits.length - decimals).replace(/0+$/, "")
  return `${negative ? "-" : ""}${whole}${fraction.length > 0 ? `.${fraction}` : ""}`
}

/** Parses a non-negative decimal string into smallest units; undefined if it has too many decimals. */
export const parseAtomic = (text: string, decimals: number): bigint | undefined => {
  const match = /^(\d+)(?:\.(\d+))?$/.exec(text)
  if (match === null) return undefined
  const [, whole, fraction = ""] = match
  if (fraction.length > decimals) return undefined
  return BigInt(whole) * 10n ** BigInt(decimals) + BigInt(fraction.padEnd(decimals, "0"))
}

export const ceilDiv = (numerator: bigint, denominator: bigint): bigint => (numerator + denominator - 1n) / denominator

/** Atomic amount due for a USD amount at a rate (micro-dollars per whole unit): rounded up, so the payer never underpays. */
export const quoteAtomic = (amountMicros: Micros, rateMicros: bigint, decimals: number): bigint => ceilDiv(amountMicros * 10n ** BigInt(decimals), rateMicros)

export const maxBig = (a: bigint, b: bigint): bigint => (a > b ? a : b)
