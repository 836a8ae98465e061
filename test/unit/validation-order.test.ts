import { Schema } from "effect"
import { describe, expect, it } from "vitest"
import { CreateInvoiceBody } from "../../src/http/RequestSchemas.ts"
import { paymentTimingRules, validationMessage } from "../../src/http/ValidationErrors.ts"
import { timingOverrideProblem } from "../../src/domain/TimingOverride.ts"

/**
 * The message the edge answers for a body, decoded as the API decodes payloads (every failure,
 * unknown keys refused), with the create endpoint's mode rules (BodyRules) ranked among them.
 */
const messageFor = (body: unknown) => {
  const exit = Schema.decodeUnknownExit(CreateInvoiceBody)(body, { onExcessProperty: "error", errors: "all" })
  if (exit._tag === "Success") return undefined
  const reason = exit.cause.reasons[0]
  if (reason._tag !== "Fail") throw new Error("not a schema failure")
  return validationMessage(reason.error.issue, "Request body", body, paymentTimingRules(body))
}

describe("validation order (#48 item 3)", () => {
  it("a body invalid in two fields names the first in the body's order", () => {
    expect(messageFor({ productName: 5, amountUsd: "x" })).toBe("productName must be a string")
    expect(messageFor({ amountUsd: "x", productName: 5 })).toBe("amountUsd must be a number")
    expect(messageFor({ metadata: { notes: 1 }, paymentTiming: { mode: "weekly" }, amountUsd: 5 })).toBe("metadata.notes must be a string")
  })

  it("within a nested object too, and a missing field after every field present", () => {
    expect(messageFor({ paymentTiming: { gracePeriodDays: -1, mode: "weekly" }, amountUsd: 5 })).toBe("paymentTiming.gracePeriodDays must be at least 0")
    expect(messageFor({ productName: 5 })).toBe("productName must be a string")
  })

  it("checks paymentTiming's fields against its mode (for a body the schema accepts: in the handler, before any lookup, inside the idempotency claim)", () => {
    expect(timingOverrideProblem({ mode: "immediate", dueAfterDays: 2 })).toEqual({ field: "dueAfterDays", constraint: "is not allowed with mode immediate" })
    expect(timingOverrideProblem({ mode: "due_date", expiresAfterMinutes: 30 })).toEqual({ field: "expiresAfterMinutes", constraint: "is not allowed with mode due_date" })
    expect(timingOverrideProblem({ mode: "immediate" })).toEqual({ field: "expiresAfterMinutes", constraint: "is required" })
    expect(timingOverrideProblem({ mode: "due_date", dueAfterDays: 3 })).toBeUndefined()
  })

  it("ranks paymentTiming's mode rules with the schema's failures in body order (#52 item 6)", () => {
    expect(messageFor({ paymentTiming: { mode: "immediate" }, amountUsd: 0 })).toBe("paymentTiming.expiresAfterMinutes is required")
    expect(messageFor({ amountUsd: 0, paymentTiming: { mode: "immediate" } })).toBe("amountUsd must be at least 0.01")
    expect(messageFor({ amountUsd: 5, paymentTiming: { mode: "due_date" }, productName: 5 })).toBe("paymentTiming.dueAfterDays is required")
    expect(messageFor({ amountUsd: 5, paymentTiming: { mode: "immediate", expiresAfterMinutes: 30, gracePeriodDays: 1 }, billTo: 5 })).toBe(
      "paymentTiming.gracePeriodDays is not allowed with mode immediate"
    )
    // within paymentTiming too: the first of its fields as sent, whichever check finds it
    expect(messageFor({ paymentTiming: { mode: "immediate", gracePeriodDays: 1, expiresAfterMinutes: 2 } })).toBe(
      "paymentTiming.gracePeriodDays is not allowed with mode immediate"
    )
    expect(messageFor({ paymentTiming: { mode: "immediate", expiresAfterMinutes: 2, gracePeriodDays: 1 } })).toBe("paymentTiming.expiresAfterMinutes must be at least 5")
    // a field both checks refuse: the schema's message
    expect(messageFor({ amountUsd: 5, paymentTiming: { mode: "due_date", dueAfterDays: 3, expiresAfterMinutes: "x" } })).toBe("paymentTiming.expiresAfterMinutes must be a number")
    // no mode rule without a valid mode: the schema names the mode
    expect(messageFor({ paymentTiming: { mode: "weekly", dueAfterDays: 3 }, amountUsd: 0 })).toBe("paymentTiming.mode must be one of immediate, due_date")
  })

  it("checks amountUsd's cents once, in the schema", () => {
    expect(messageFor({ amountUsd: 1.001 })).toBe("amountUsd must have at most 2 decimal places")
    expect(messageFor({ amountUsd: 1.01 })).toBeUndefined()
  })
})
