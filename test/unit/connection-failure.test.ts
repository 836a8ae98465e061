import { AuthenticationError, ConnectionError, ConstraintError, SqlError, SqlSyntaxError, StatementTimeoutError, UniqueViolation, UnknownError } from "effect/sql/SqlError"
import { describe, expect, it } from "vitest"
import { isConnectionFailure } from "../../src/db/ConnectionFailure.ts"

/** What @effect/sql-pg puts in `reason.cause`: an Error carrying the server's fields (or Node's code). */
const withCode = (code: string) => Object.assign(new Error(`failure ${code}`), { code })
const unknown = (code: string) => new SqlError({ reason: new UnknownError({ cause: withCode(code), message: "PgConnection: Query failed", operation: "query" }) })

describe("isConnectionFailure", () => {
  it("is true for connection-level failures", () => {
    expect(isConnectionFailure(new SqlError({ reason: new ConnectionError({ cause: new Error("Connection closed") }) }))).toBe(true)
    expect(isConnectionFailure(new SqlError({ reason: new AuthenticationError({ cause: withCode("28P01") }) }))).toBe(true)
    expect(isConnectionFailure(new SqlError({ reason: new StatementTimeoutError({ cause: withCode("57014") }) }))).toBe(true)
    for (const code of ["08006", "08001", "57P01", "57P02", "57P03", "57P04", "53300", "53200", "58030", "ECONNREFUSED", "ECONNRESET", "ETIMEDOUT", "EPIPE"]) {
      expect(isConnectionFailure(unknown(code)), code).toBe(true)
    }
  })

  it("is true for whatever the server answers while refusing a new connection: 55000 (no connections allowed), 57P03, 53300, 3D000", () => {
    for (const code of ["55000", "57P03", "53300", "3D000", "08004"]) {
      const refused = new SqlError({ reason: new UnknownError({ cause: withCode(code), message: "PgConnection: Failed to connect", operation: "connect" }) })
      expect(isConnectionFailure(refused), code).toBe(true)
    }
    // The same 55000 from a statement is that statement's failure.
    expect(isConnectionFailure(unknown("55000"))).toBe(false)
  })

  it("is false for statement errors", () => {
    // 22P02: `abc` as a uuid, the error that used to mark the whole database unavailable.
    for (const code of ["22P02", "22003", "22001", "XX000", "P0001", "40P01", "40001", "55P03", "57014x", ""]) {
      expect(isConnectionFailure(unknown(code)), code).toBe(false)
    }
    expect(isConnectionFailure(new SqlError({ reason: new SqlSyntaxError({ cause: withCode("42601") }) }))).toBe(false)
    expect(isConnectionFailure(new SqlError({ reason: new UniqueViolation({ cause: withCode("23505"), constraint: "x" }) }))).toBe(false)
    expect(isConnectionFailure(new SqlError({ reason: new ConstraintError({ cause: withCode("23503") }) }))).toBe(false)
    expect(isConnectionFailure(new SqlError({ reason: new UnknownError({ cause: new Error("COMMIT rolled back an aborted transaction") }) }))).toBe(false)
  })

  it("is false for anything that is not an SqlError", () => {
    for (const value of [undefined, null, "SqlError", new Error("ECONNREFUSED"), withCode("ECONNREFUSED"), { _tag: "SqlError" }]) {
      expect(isConnectionFailure(value)).toBe(false)
    }
  })
})
