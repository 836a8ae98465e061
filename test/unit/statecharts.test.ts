import { readFileSync } from "node:fs"
import { join } from "node:path"
import { describe, expect, it } from "vitest"
import { type AnyStateMachine, createMachine, transition } from "xstate"
import { getAdjacencyMap } from "xstate/graph"
import type { InvoiceEvent } from "../../src/lifecycle/InvoiceMachine.ts"
import { decide, initialDecision, type LifecycleState } from "../../src/lifecycle/Lifecycle.ts"
import { invoiceMachine } from "../../src/lifecycle/InvoiceMachine.ts"
import { machineFromConfigJson, statechartFiles, transitionRows } from "../../src/lifecycle/StatechartExport.ts"

const EVENTS: ReadonlyArray<InvoiceEvent> = [
  { type: "VOID" },
  { type: "RECORD_PAYMENT" },
  { type: "DEADLINE_PASSED" },
  ...(["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"] as const).map((action) => ({ type: "CLOSE_EXCEPTION" as const, action })),
  ...(["none", "partial", "sufficient", "confirmed"] as const).flatMap((onTime) =>
    (["none", "partial", "sufficient"] as const).flatMap((total) => [false, true].map((newLatePayment) => ({ type: "EVIDENCE" as const, onTime, total, newLatePayment })))
  ),
  ...(["none", "partial", "sufficient"] as const).map((total) => ({ type: "REORG_SETTLED" as const, total }))
]

const exceptionPath = (state: LifecycleState) => state.exceptionStatus === "open" ? `open.${state.exceptionType}` : state.exceptionStatus === "closed" ? "closed" : "none"

interface Step {
  readonly from: LifecycleState
  readonly event: InvoiceEvent
  readonly to: LifecycleState
}

/** Every transition reachable from a new invoice, found by breadth-first search over decide(). */
const reachableSteps = (): Array<Step> => {
  const key = (state: LifecycleState) => JSON.stringify(state)
  const start = initialDecision().state
  const seen = new Set([key(start)])
  const queue = [start]
  const steps: Array<Step> = []
  while (queue.length > 0) {
    const from = queue.shift()!
    for (const event of EVENTS) {
      const decision = decide(from, event)
      if (decision === undefined) continue
      steps.push({ from, event, to: decision.state })
      if (!seen.has(key(decision.state))) {
        seen.add(key(decision.state))
        queue.push(decision.state)
      }
    }
  }
  return steps
}

describe("statecharts", () => {
  it("the committed statecharts/ equal a fresh export (run npm run statecharts)", () => {
    for (const [name, content] of Object.entries(statechartFiles())) {
      expect(readFileSync(join(import.meta.dirname, "..", "..", "statecharts", name), "utf8"), name).toBe(content)
    }
  })

  it("every transition of the statechart table is taken by some reachable path", () => {
    const steps = reachableSteps()
    for (const row of transitionRows()) {
      const witness = steps.find((step) => {
        if (step.event.type !== row.event) return false
        const action = /actionIs\((\w+)\)/.exec(row.guard)?.[1]
        if (action !== undefined && (step.event.type !== "CLOSE_EXCEPTION" || step.event.action !== action)) return false
        const [before, after] = row.region === "status"
          ? [step.from.status, step.to.status]
          : [exceptionPath(step.from), exceptionPath(step.to)]
        return (before === row.from || before.startsWith(`${row.from}.`)) && after === row.to && before !== after
      })
      expect(witness, `${row.region}: ${row.from} --${row.event} [${row.guard}]--> ${row.to}`).toBeDefined()
    }
  })

  it("reaches all seven statuses and every exception state", () => {
    const steps = reachableSteps()
    const statuses = new Set(steps.flatMap((step) => [step.from.status, step.to.status]))
    expect([...statuses].sort()).toEqual(
      ["awaiting_payment", "confirmed", "expired", "paid_out_of_band", "partially_paid", "payment_detected", "voided"]
    )
    const exceptions = new Set(steps.map((step) => exceptionPath(step.to)))
    expect([...exceptions].sort()).toEqual(["closed", "none", "open.late_payment", "open.partial_payment"])
  })

  it("invoice.json is a config createMachine accepts, and the machine built from it moves exactly as the source machine", () => {
    const exported = JSON.parse(readFileSync(join(import.meta.dirname, "..", "..", "statecharts", "invoice.json"), "utf8"))
    expect(() => createMachine(exported)).not.toThrow()
    const rebuilt = machineFromConfigJson(exported)
    // Every reachable state and every event: the same next state, and the same effects in the same order.
    const adjacency = (machine: AnyStateMachine) => {
      const map = getAdjacencyMap(machine, { events: [...EVENTS] })
      return Object.fromEntries(Object.entries(map).map(([state, { transitions }]) => [
        state,
        Object.fromEntries(Object.entries(transitions).map(([event, step]) => [event, JSON.stringify((step as { readonly state: { readonly value: unknown } }).state.value)]))
      ]))
    }
    const source = adjacency(invoiceMachine)
    expect(Object.keys(source).length).toBeGreaterThan(10)
    expect(adjacency(rebuilt)).toEqual(source)
    for (const state of Object.keys(source)) {
      const value = JSON.parse(state).value
      for (const event of EVENTS) {
        const [sourceNext, sourceActions] = transition(invoiceMachine, invoiceMachine.resolveState({ value, context: undefined }), event)
        const [rebuiltNext, rebuiltActions] = transition(rebuilt, rebuilt.resolveState({ value, context: undefined }), event)
        const effects = (actions: ReadonlyArray<{ type: string; params?: unknown }>) => actions.map((action) => [action.type, action.params])
        expect([rebuiltNext.value, effects(rebuiltActions)]).toEqual([sourceNext.value, effects(sourceActions)])
      }
    }
  })
})
