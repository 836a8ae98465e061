import { Effect } from "effect"

/**
 * Whether a database failure means the database cannot be reached (connection refused, reset or
 * timed out, the server shutting down or out of connections) rather than that one statement was
 * wrong (a malformed uuid, a constraint). Only the former may mark the whole database unavailable:
 * a statement error is that request's own 500. Pure; reads the SqlError that @effect/sql-pg
 * builds: `reason._tag` (sql-pg classifies class 08 as ConnectionError, 28 as AuthenticationError,
 * 57014 as StatementTimeoutError) and, for the rest, the SQLSTATE or Node error code of
 * `reason.cause`.
 */

const CONNECTION_REASONS = new Set(["ConnectionError", "AuthenticationError", "StatementTimeoutError"])

/**
 * SQLSTATEs of a server that cannot serve any statement: class 08 (connection exception), 53
 * (insufficient resources: too many connections, out of memory, disk full), 57P01-57P05 (admin or
 * crash shutdown, cannot connect now, database dropped, idle session timeout), 58 (system I/O errors).
 */
const CONNECTION_SQLSTATE = /^(?:08...|53...|57P0[1-5]|58...)$/

/** Socket-level errors of Node, as the client reports them in a cause's `code`. */
const SOCKET_CODES = new Set([
  "ECONNREFUSED",
  "ECONNRESET",
  "ECONNABORTED",
  "EPIPE",
  "ETIMEDOUT",
  "EHOSTUNREACH",
  "ENETUNREACH",
  "ENETDOWN",
  "ENOTFOUND",
  "EAI_AGAIN",
  "EADDRNOTAVAIL"
])

interface SqlErrorLike {
  readonly _tag?: unknown
  readonly reason?: { readonly _tag?: unknown; readonly operation?: unknown; readonly cause?: { readonly code?: unknown } }
}

export const isSqlError = (error: unknown): boolean => (error as SqlErrorLike | undefined)?._tag === "SqlError"

/** True only for an SqlError whose reason is connection-level; false for statement errors and anything else. */
export const isConnectionFailure = (error: unknown): boolean => {
  if (!isSqlError(error)) return false
  const reason = (error as SqlErrorLike).reason
  if (reason === undefined) return false
  if (typeof reason._tag === "string" && CONNECTION_REASONS.has(reason._tag)) return true
  // Whatever the server says while refusing a new connection (55000: the database does not allow
  // connections; 57P03, 53300, 3D000, ...), no statement can run until it takes one.
  if (reason.operation === "connect") return true
  const code = reason.cause?.code
  return typeof code === "string" && (CONNECTION_SQLSTATE.test(code) || SOCKET_CODES.has(code))
}

/**
 * For a lookup whose failure means "the status cannot be verified" (503): that, when the database
 * cannot be reached; a defect (500) when the statement itself failed.
 */
export const statusUnavailableOrDie = <E>(unavailable: () => E) => (error: unknown): Effect.Effect<never, E> =>
  isConnectionFailure(error) ? Effect.fail(unavailable()) : Effect.die(error)
