/**
 * The instants a query may compare with a timestamptz column: years 1 to 9999. JavaScript dates
 * reach 271821 BC, which PostgreSQL refuses ("timestamp out of range"), failing the statement.
 */
const MIN_MS = Date.parse("0001-01-01T00:00:00.000Z")
const MAX_MS = Date.parse("9999-12-31T23:59:59.999Z")

export const isStorableInstant = (ms: number): boolean => !Number.isNaN(ms) && ms >= MIN_MS && ms <= MAX_MS
