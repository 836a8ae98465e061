import { describe, expect, it } from "vitest"
import { statusesAccepting } from "../../src/lifecycle/Lifecycle.ts"

describe("which statuses take an operation, asked of the machine", () => {
  it("matches the spec: void from awaiting_payment; record-payment from awaiting, partially paid and expired; expiry while payable", () => {
    expect(statusesAccepting({ type: "VOID" })).toEqual(["awaiting_payment"])
    expect(statusesAccepting({ type: "RECORD_PAYMENT" })).toEqual(["awaiting_payment", "partially_paid", "expired"])
    // The partial index invoices_due_for_expiry and ExpiryRepo.claimDueForExpiry spell this list
    // in SQL (the planner needs it literally): this is what they must say.
    expect(statusesAccepting({ type: "DEADLINE_PASSED" })).toEqual(["awaiting_payment", "partially_paid"])
  })
})
