/** Tolerant decoders for values as the PostgreSQL driver returns them. */
export const toBigInt = (value: unknown): bigint => {
  if (typeof value === "bigint") return value
  if (typeof value === "number") return BigInt(value)
  if (typeof value === "string") return BigInt(value)
  throw new TypeError(`expected an integer column, got ${typeof value}`)
}

export const toNumber = (value: unknown): number => (typeof value === "number" ? value : Number(value))

export const toDate = (value: unknown): Date => (value instanceof Date ? value : new Date(String(value)))

export const toDateOrNull = (value: unknown): Date | null => (value === null || value === undefined ? null : toDate(value))

export const toStringOrNull = (value: unknown): string | null => (value === null || value === undefined ? null : String(value))

export const toJsonObject = (value: unknown): Record<string, unknown> | null => {
  if (value === null || value === undefined) return null
  if (typeof value === "string") return JSON.parse(value) as Record<string, unknown>
  return value as Record<string, unknown>
}
