import { describe, expect, it } from "vitest"
import type { OnTimeLevel, TotalLevel } from "../../src/domain/Evidence.ts"
import type { ExceptionStatus, ExceptionType } from "../../src/domain/Statuses.ts"
import { closeActionsAccepted, decide, initialDecision, type LifecycleEffect, type LifecycleState } from "../../src/lifecycle/Lifecycle.ts"

/**
 * `decide` on single stored states, the state and effects each time, as DESIGN.md's "Lifecycle
 * decisions" words them; and the close actions the dashboard offers. `npm run test:mutation` runs them.
 */

const state = (status: LifecycleState["status"], exceptionType: ExceptionType | null = null, exceptionStatus: ExceptionStatus | null = null): LifecycleState => ({
  status,
  exceptionType,
  exceptionStatus
})
const evidence = (onTime: OnTimeLevel, total: TotalLevel, newLatePayment = false) => ({ type: "EVIDENCE" as const, onTime, total, newLatePayment })
const emit = (event: string): LifecycleEffect => ({ kind: "emit", event } as LifecycleEffect)
const stamp = (field: string): LifecycleEffect => ({ kind: "stamp", field } as LifecycleEffect)
const opens = (exceptionType: ExceptionType): Array<LifecycleEffect> => [{ kind: "openException", exceptionType }, emit("invoice_exception_opened")]
const closes: Array<LifecycleEffect> = [stamp("exceptionClosedAt"), { kind: "recordExceptionClose" }, emit("invoice_exception_closed")]

describe("decide: one event on a stored lifecycle state", () => {
  it("a new invoice awaits payment with no exception and says invoice_created", () => {
    expect(initialDecision()).toEqual({ state: state("awaiting_payment"), effects: [emit("invoice_created")] })
  })

  it("void stamps voidedAt (where the payable window of a voided invoice ends) and says invoice_voided", () => {
    expect(decide(state("awaiting_payment"), { type: "VOID" })).toEqual({ state: state("voided"), effects: [stamp("voidedAt"), emit("invoice_voided")] })
  })

  it("a pair (state, event) is worked out once: the same decision is returned again", () => {
    const event = evidence("partial", "partial")
    expect(decide(state("awaiting_payment"), event)).toBe(decide(state("awaiting_payment"), event))
  })

  for (const status of ["expired", "voided"] as const) {
    it(`${status} without an exception: counted evidence, new or not (a payment re-included after the expiry), opens an exception by the total`, () => {
      expect(decide(state(status), evidence("none", "partial"))).toEqual({ state: state(status, "partial_payment", "open"), effects: opens("partial_payment") })
      expect(decide(state(status), evidence("partial", "sufficient"))).toEqual({ state: state(status, "late_payment", "open"), effects: opens("late_payment") })
      expect(decide(state(status), evidence("none", "none"))).toBeUndefined()
    })

    it(`${status} with an open exception: its type follows the total (partial → late once it suffices, late → partial once it does not)`, () => {
      expect(decide(state(status, "partial_payment", "open"), evidence("none", "sufficient"))).toEqual({
        state: state(status, "late_payment", "open"),
        effects: opens("late_payment")
      })
      expect(decide(state(status, "late_payment", "open"), evidence("none", "partial"))).toEqual({
        state: state(status, "partial_payment", "open"),
        effects: opens("partial_payment")
      })
      expect(decide(state(status, "late_payment", "open"), evidence("none", "sufficient", true))).toBeUndefined()
    })
  }

  it("after a closed exception only a newly observed late payment opens a new one, replacing the closed one", () => {
    expect(decide(state("expired", "partial_payment", "closed"), evidence("none", "sufficient"))).toBeUndefined()
    expect(decide(state("expired", "partial_payment", "closed"), evidence("none", "sufficient", true))).toEqual({
      state: state("expired", "late_payment", "open"),
      effects: opens("late_payment")
    })
  })

  it("closing keeps the exception's type; accept_late_payment confirms a late_payment exception", () => {
    expect(decide(state("voided", "partial_payment", "open"), { type: "CLOSE_EXCEPTION", action: "close_unpaid" })).toEqual({
      state: state("voided", "partial_payment", "closed"),
      effects: closes
    })
    expect(decide(state("expired", "late_payment", "open"), { type: "CLOSE_EXCEPTION", action: "accept_late_payment" })).toEqual({
      state: state("confirmed", "late_payment", "closed"),
      effects: [stamp("confirmedAt"), emit("invoice_confirmed"), ...closes]
    })
  })

  it("mark_paid_out_of_band on an expired invoice's exception moves it to paid_out_of_band, the payment recorded once", () => {
    expect(decide(state("expired", "partial_payment", "open"), { type: "CLOSE_EXCEPTION", action: "mark_paid_out_of_band" })).toEqual({
      state: state("paid_out_of_band", "partial_payment", "closed"),
      effects: [stamp("paidOutOfBandAt"), { kind: "recordOutOfBandNote" }, emit("invoice_payment_recorded"), ...closes]
    })
  })

  it("a loss that a settled reorganisation leaves on a confirmed invoice opens a partial_payment exception, after a closed one too, never while one is open", () => {
    const settled = (total: "none" | "partial" | "sufficient") => ({ type: "REORG_SETTLED" as const, total })
    for (const before of [state("confirmed"), state("confirmed", "partial_payment", "closed"), state("confirmed", "late_payment", "closed")]) {
      expect(decide(before, settled("partial"))).toEqual({ state: state("confirmed", "partial_payment", "open"), effects: opens("partial_payment") })
      expect(decide(before, settled("none"))).toEqual({ state: state("confirmed", "partial_payment", "open"), effects: opens("partial_payment") })
      expect(decide(before, settled("sufficient"))).toBeUndefined()
    }
    expect(decide(state("confirmed", "partial_payment", "open"), settled("none"))).toBeUndefined()
    expect(decide(state("paid_out_of_band", "partial_payment", "closed"), settled("none"))).toBeUndefined()
  })

  it("a confirmed invoice's reorg exception closed with mark_paid_out_of_band records the payment out of band and stays confirmed", () => {
    expect(decide(state("confirmed", "partial_payment", "open"), { type: "CLOSE_EXCEPTION", action: "mark_paid_out_of_band" })).toEqual({
      state: state("confirmed", "partial_payment", "closed"),
      effects: [stamp("paidOutOfBandAt"), { kind: "recordOutOfBandNote" }, ...closes]
    })
  })
})

describe("the close actions the dashboard offers (closeActionsAccepted)", () => {
  it("all three on an open late_payment exception; not accept_late_payment on a partial one; none without an open exception", () => {
    expect(closeActionsAccepted(state("expired", "late_payment", "open"))).toEqual(["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"])
    expect(closeActionsAccepted(state("voided", "partial_payment", "open"))).toEqual(["mark_paid_out_of_band", "close_unpaid"])
    expect(closeActionsAccepted(state("confirmed", "partial_payment", "open"))).toEqual(["mark_paid_out_of_band", "close_unpaid"])
    expect(closeActionsAccepted(state("expired", "late_payment", "closed"))).toEqual([])
    expect(closeActionsAccepted(state("awaiting_payment"))).toEqual([])
  })

  it("an open exception stored without a type is taken as partial_payment (nothing to accept as late)", () => {
    expect(closeActionsAccepted(state("expired", null, "open"))).toEqual(["mark_paid_out_of_band", "close_unpaid"])
  })
})
