import { initialTransition, transition } from "xstate"
import { ExceptionCloseAction, type ExceptionStatus, type ExceptionType, INVOICE_STATUSES, type InvoiceStatus, type WebhookEventName } from "../domain/Statuses.ts"
import { type InvoiceEvent, invoiceMachine, type StampedField } from "./InvoiceMachine.ts"

/** The part of an invoice that the lifecycle owns. */
export interface LifecycleState {
  readonly status: InvoiceStatus
  readonly exceptionType: ExceptionType | null
  readonly exceptionStatus: ExceptionStatus | null
}

/** What a transition asks the service to do, as plain data. */
export type LifecycleEffect =
  | { readonly kind: "emit"; readonly event: WebhookEventName }
  | { readonly kind: "stamp"; readonly field: StampedField }
  | { readonly kind: "recordOutOfBandNote" }
  | { readonly kind: "recordExceptionClose" }
  | { readonly kind: "openException"; readonly exceptionType: ExceptionType }

export interface Decision {
  readonly state: LifecycleState
  readonly effects: ReadonlyArray<LifecycleEffect>
}

type Snapshot = ReturnType<typeof invoiceMachine.resolveState>

const exceptionValue = (state: LifecycleState) =>
  state.exceptionStatus === "open"
    ? { open: state.exceptionType ?? "partial_payment" }
    : state.exceptionStatus === "closed"
    ? "closed"
    : "none"

export const toSnapshot = (state: LifecycleState): Snapshot => invoiceMachine.resolveState({ value: { status: state.status, exception: exceptionValue(state) } })

// The exception type is the snapshot's own (`open.<type>`): the state the machine entered, which
// is what is stored and restored. A close keeps the type it closed (`closedType`).
const fromSnapshot = (snapshot: Snapshot, closedType: ExceptionType | null): LifecycleState => {
  const value = snapshot.value as { status: InvoiceStatus; exception: "none" | "closed" | { open: ExceptionType } }
  if (value.exception === "none") return { status: value.status, exceptionType: null, exceptionStatus: null }
  if (value.exception === "closed") return { status: value.status, exceptionType: closedType, exceptionStatus: "closed" }
  return { status: value.status, exceptionType: value.exception.open, exceptionStatus: "open" }
}

const toEffect = (action: { type: string; params: unknown }): LifecycleEffect | undefined => {
  const params = (action.params ?? {}) as Record<string, unknown>
  switch (action.type) {
    case "emit":
      return { kind: "emit", event: params.event as WebhookEventName }
    case "stamp":
      return { kind: "stamp", field: params.field as StampedField }
    case "recordOutOfBandNote":
      return { kind: "recordOutOfBandNote" }
    case "recordExceptionClose":
      return { kind: "recordExceptionClose" }
    case "openException":
      return { kind: "openException", exceptionType: params.exceptionType as ExceptionType }
    default:
      return undefined
  }
}

const effectsOf = (actions: ReadonlyArray<{ type: string; params: unknown }>): Array<LifecycleEffect> =>
  actions.flatMap((action) => {
    const effect = toEffect(action)
    return effect === undefined ? [] : [effect]
  })

export const initialDecision = (): Decision => (initial ??= computeInitialDecision())

// The same for every invoice: computed once, not on every create.
let initial: Decision | undefined
const computeInitialDecision = (): Decision => {
  const [snapshot] = initialTransition(invoiceMachine)
  const state = fromSnapshot(snapshot, null)
  return { state, effects: [{ kind: "emit", event: "invoice_created" }] }
}

/**
 * Applies one event to a stored lifecycle state. Returns undefined when the machine takes no
 * transition for it (the event is not allowed, or changes nothing).
 */
export const decide = (state: LifecycleState, event: InvoiceEvent): Decision | undefined => {
  const key = decisionKey(state, event)
  if (decisions.has(key)) return decisions.get(key)
  const decision = computeDecision(state, event)
  decisions.set(key, decision === undefined ? undefined : Object.freeze({ ...decision, effects: Object.freeze(decision.effects) }))
  return decisions.get(key)
}

// The machine has no context: a decision depends only on the stored state and the event, both a
// few enumerated values, so each pair is worked out by the machine once (it was a sixth of the CPU
// time of applying evidence) and remembered; there are a few hundred pairs at most.
const decisions = new Map<string, Decision | undefined>()
const decisionKey = (state: LifecycleState, event: InvoiceEvent) =>
  `${state.status}|${state.exceptionType}|${state.exceptionStatus}|${event.type}|${
    event.type === "EVIDENCE"
      ? `${event.onTime}|${event.total}|${event.newLatePayment}`
      : event.type === "REORG_SETTLED"
      ? event.total
      : event.type === "CLOSE_EXCEPTION"
      ? event.action
      : ""
  }`

const computeDecision = (state: LifecycleState, event: InvoiceEvent): Decision | undefined => {
  const snapshot = toSnapshot(state)
  if (!snapshot.can(event)) return undefined
  const [next, actions] = transition(invoiceMachine, snapshot, event)
  return { state: fromSnapshot(next, state.exceptionType), effects: effectsOf(actions) }
}

/**
 * The statuses (without an exception) from which the machine takes `event`: the one answer to
 * "which invoices can be voided, paid out of band, or expire", so that no caller keeps its own list.
 */
export const statusesAccepting = (event: InvoiceEvent): ReadonlyArray<InvoiceStatus> =>
  INVOICE_STATUSES.filter((status) => decide({ status, exceptionType: null, exceptionStatus: null }, event) !== undefined)

/**
 * The close actions the machine takes for an invoice in `state`: the same `decide` that accepts or
 * refuses a close (409), asked ahead, so that the dashboard offers only these. None without an open exception.
 */
export const closeActionsAccepted = (state: LifecycleState): ReadonlyArray<ExceptionCloseAction> =>
  ExceptionCloseAction.literals.filter((action) => decide(state, { type: "CLOSE_EXCEPTION", action }) !== undefined)

export type { InvoiceEvent }
