import { readFileSync } from "node:fs"
import { join } from "node:path"
import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { type AnyStateMachine, initialTransition, transition } from "xstate"
import { invoiceMachine } from "../../src/lifecycle/InvoiceMachine.ts"
import { machineFromConfigJson } from "../../src/lifecycle/StatechartExport.ts"

/**
 * The exported statechart is the machine: random event sequences run through the machine built
 * from statecharts/invoice.json (machineFromConfigJson, with its guards) and through the source
 * machine reach the same states with the same actions (type and parameters, in order). The
 * Mermaid files are compared with a fresh export by test/unit/statecharts.test.ts.
 */

type AnyEvent = { readonly type: string } & Record<string, unknown>

const LEVELS = ["none", "partial", "sufficient", "confirmed"] as const
const TOTALS = ["none", "partial", "sufficient"] as const

const eventArb: fc.Arbitrary<AnyEvent> = fc.oneof(
  fc.constantFrom<AnyEvent>({ type: "VOID" }, { type: "RECORD_PAYMENT" }, { type: "DEADLINE_PASSED" }),
  fc.constantFrom("accept_late_payment", "mark_paid_out_of_band", "close_unpaid").map((action): AnyEvent => ({ type: "CLOSE_EXCEPTION", action })),
  fc.record({ type: fc.constant("EVIDENCE"), onTime: fc.constantFrom(...LEVELS), total: fc.constantFrom(...TOTALS), newLatePayment: fc.boolean() }),
  fc.record({ type: fc.constant("REORG_SETTLED"), total: fc.constantFrom(...TOTALS) })
)

const exported = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "statecharts", "invoice.json"), "utf8"))

const actionsOf = (actions: ReadonlyArray<{ readonly type: string; readonly params?: unknown }>) => actions.map((action) => [action.type, action.params ?? null])

/** The states and actions of a machine along an event sequence. */
const walk = (machine: AnyStateMachine, events: ReadonlyArray<AnyEvent>) => {
  const [first, initialActions] = initialTransition(machine)
  let snapshot = first
  const trace: Array<unknown> = [[first.value, actionsOf(initialActions)]]
  for (const event of events) {
    const [next, actions] = transition(machine, snapshot, event)
    snapshot = next
    trace.push([event.type, next.value, actionsOf(actions)])
  }
  return trace
}

describe("the exported statechart", () => {
  it("random event sequences give the same states and actions in the machine rebuilt from invoice.json as in the source machine", () => {
    const rebuilt = machineFromConfigJson(exported) as AnyStateMachine
    fc.assert(
      fc.property(fc.array(eventArb, { maxLength: 25 }), (events) => {
        expect(walk(rebuilt, events)).toEqual(walk(invoiceMachine as AnyStateMachine, events))
      }),
      { numRuns: 2_000 }
    )
  })

  it("a sequence that moves the invoice does move both (the comparison is not vacuous)", () => {
    const rebuilt = machineFromConfigJson(exported) as AnyStateMachine
    const events: ReadonlyArray<AnyEvent> = [{ type: "DEADLINE_PASSED" }, { type: "EVIDENCE", onTime: "none", total: "sufficient", newLatePayment: true }]
    const trace = walk(rebuilt, events)
    expect(trace.at(-1)).toEqual(["EVIDENCE", { status: "expired", exception: { open: "late_payment" } }, expect.anything()])
  })
})
