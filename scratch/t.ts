import { transition } from "xstate"
import { invoiceMachine } from "../src/lifecycle/_M.ts"
const run = (value: any, ev: any) => {
const s = invoiceMachine.resolveState({ value })
const [n, a] = transition(invoiceMachine, s, ev)
console.log(s.can(ev), JSON.stringify(n.value), a.map((x: any) => x.type + JSON.stringify(x.params)).join(" "))
}
run({ status: "awaiting_payment", exception: "none" }, { type: "VOID" })
run({ status: "expired", exception: { open: "partial_payment" } }, { type: "EVIDENCE", onTime: "none", total: "sufficient", newLatePayment: true })
run({ status: "expired", exception: { open: "late_payment" } }, { type: "EVIDENCE", onTime: "none", total: "partial", newLatePayment: false })
