import { type CloseAction, type EventName, type ExceptionType, rowById, type StampedField, type Status } from "./transitions.ts"

/**
 * A reference model of one invoice, built only from the rows of transitions.ts (nothing from
 * src/): every move it makes names the row it takes, and takes that row's target, events and
 * stamped fields. Money is in micro-dollars; time in epoch milliseconds.
 */

export const AMOUNT_MICROS = 100_000_000n
export const MINUTE = 60_000

/** What a test does to an invoice; the words of `describeCommand` are the spec's. */
export type Command =
  | {
    readonly kind: "pay"
    readonly option: number
    /** USD to the cent, or `rest`: what is still owed (the whole amount once nothing is). */
    readonly usd: number | "rest"
    /** One smallest unit (of the 6-decimal USDC options, quoted 1:1: one micro-dollar) short or over. */
    readonly unit?: -1 | 0 | 1
    readonly confirmations: number
    /** The evidence's chain time: `now` minus `lagMs`, or `payableUntilAt` plus `offsetMs`. */
    readonly chainTime: { readonly from: "now" | "deadline"; readonly offsetMs: number }
    readonly mempool?: boolean
    /** Reported by two watchers at the same time (a concurrent duplicate). */
    readonly twice?: boolean
  }
  | { readonly kind: "observe"; readonly payment: number; readonly confirmations: number | "same"; readonly mempool?: boolean }
  | { readonly kind: "duplicate"; readonly payment: number }
  | { readonly kind: "invalidate"; readonly payment: number; readonly reorgPoint: boolean }
  | { readonly kind: "settleReorg"; readonly payment: number }
  | { readonly kind: "advance"; readonly ms: number }
  | { readonly kind: "sweep" }
  | { readonly kind: "watcher"; readonly network: string; readonly chainTime: { readonly from: "now" | "deadline"; readonly offsetMs: number } | null }
  | { readonly kind: "void" }
  | { readonly kind: "record"; readonly note: string }
  | { readonly kind: "close"; readonly action: CloseAction; readonly note: string }

const duration = (ms: number) =>
  ms === 0 ? "0" : Math.abs(ms) % MINUTE === 0 ? `${Math.abs(ms) / MINUTE} min` : Math.abs(ms) >= 1000 ? `${Math.abs(ms) / 1000} s` : `${Math.abs(ms)} ms`
const timeWords = (at: { readonly from: "now" | "deadline"; readonly offsetMs: number }) =>
  at.from === "now"
    ? (at.offsetMs === 0 ? "now" : `${duration(at.offsetMs)} ago`)
    : at.offsetMs === 0
    ? "exactly at payableUntilAt"
    : `${duration(at.offsetMs)} ${at.offsetMs < 0 ? "before" : "after"} payableUntilAt`

/** The command in the spec's words, for failure reports (a shrunk sequence reads as a story). */
export const describeCommand = (command: Command): string => {
  switch (command.kind) {
    case "pay":
      return `payer pays ${command.usd === "rest" ? "what is still owed" : `${command.usd} USD`}${
        command.unit === -1 ? " less one unit" : command.unit === 1 ? " and one unit more" : ""
      } through option ${command.option} (${command.confirmations} confirmations, chain time ${timeWords(command.chainTime)}${
        command.mempool === true ? ", first seen in the mempool" : ""
      }${command.twice === true ? "; reported twice at the same time" : ""})`
    case "observe":
      return `watcher reports evidence #${command.payment} again (${command.confirmations === "same" ? "same confirmations" : `${command.confirmations} confirmations`}${
        command.mempool === true ? ", in the mempool" : ""
      }; re-included if invalidated)`
    case "duplicate":
      return `two watchers report evidence #${command.payment} at the same time`
    case "invalidate":
      return `a chain reorganisation invalidates evidence #${command.payment}${command.reorgPoint ? " (watcher reorg, judged once it settles)" : " (judged at once)"}`
    case "settleReorg":
      return `the reorganisation that invalidated evidence #${command.payment} settles`
    case "advance":
      return `time passes: ${duration(command.ms)}`
    case "sweep":
      return "the deadline sweeper runs"
    case "watcher":
      return `the ${command.network} watcher has processed chain data up to ${command.chainTime === null ? "nothing yet" : timeWords(command.chainTime)}`
    case "void":
      return "merchant: POST void"
    case "record":
      return `merchant: POST record-payment (note "${command.note}")`
    case "close":
      return `merchant closes the exception with \`${command.action}\` (note "${command.note}")`
  }
}

export type Outcome = "ok" | "refused" | "rejected"

export interface ModelPayment {
  readonly transactionHash: string
  readonly option: number
  readonly micros: bigint
  readonly chainTime: number
  /** First-observation order, for ties of chain time. */
  readonly order: number
  readonly late: boolean
  confirmations: number
  /** Reached its option's required confirmations (kept until invalidated). */
  confirmed: boolean
  valid: boolean
  /** Invalidated by a watcher's reorganisation of a confirmed invoice, to be judged when it settles (D13). */
  reorgPending: boolean
}

export interface ModelInvoice {
  status: Status
  exceptionType: ExceptionType | null
  exceptionStatus: "open" | "closed" | null
  exceptionAction: CloseAction | null
  exceptionNote: string | null
  exceptionClosedAt: number | null
  paymentDetectedAt: number | null
  confirmedAt: number | null
  paidOutOfBandAt: number | null
  paidOutOfBandNote: string | null
  events: Array<EventName>
}

export interface ModelOption {
  readonly network: string
  readonly requiredConfirmations: number
}

export interface Model {
  readonly invoice: ModelInvoice
  readonly payments: Array<ModelPayment>
  readonly options: ReadonlyArray<ModelOption>
  now: number
  readonly payableUntilAt: number
  /** A due-date invoice's dueAt (its grace period runs from it to payableUntilAt). */
  dueAt?: number
  /** Chain time each watched network's watcher has processed (null: nothing yet). */
  readonly watchers: Map<string, number | null>
  /** Every row the model took, for coverage. */
  readonly rowsTaken: Set<string>
}

export const newModel = (now: number, payableUntilAt: number, options: ReadonlyArray<ModelOption>, watched: ReadonlyArray<string> = []): Model => {
  const model: Model = {
    invoice: {
      status: "awaiting_payment",
      exceptionType: null,
      exceptionStatus: null,
      exceptionAction: null,
      exceptionNote: null,
      exceptionClosedAt: null,
      paymentDetectedAt: null,
      confirmedAt: null,
      paidOutOfBandAt: null,
      paidOutOfBandNote: null,
      events: []
    },
    payments: [],
    options,
    now,
    payableUntilAt,
    watchers: new Map(watched.map((network) => [network, now])),
    rowsTaken: new Set()
  }
  take(model, "S1-create")
  // checked after every command: exception types, amounts and coverage, lastTransactionHash, confirmations
  for (const invariant of ["R1-exception-types", "F2-coverage-and-amounts", "F1-last-transaction-hash", "F3-last-payment", "D17-confirmations"]) model.rowsTaken.add(invariant)
  return model
}

/** Takes a row: its target status, its events in order, and the fields it stamps (each once). */
const take = (model: Model, id: string, context: { readonly note?: string; readonly action?: CloseAction } = {}) => {
  const row = rowById(id)
  const invoice = model.invoice
  model.rowsTaken.add(id)
  if (row.to !== "unchanged") invoice.status = row.to
  for (const field of row.sets) stampField(model, field, context)
  if (row.exception?.opens !== undefined) {
    invoice.exceptionType = row.exception.opens
    invoice.exceptionStatus = "open"
    // D7: a new exception replaces the closed one's fields
    invoice.exceptionAction = null
    invoice.exceptionNote = null
    invoice.exceptionClosedAt = null
  }
  if (row.exception?.becomes !== undefined) invoice.exceptionType = row.exception.becomes
  if (row.exception?.closes === true) invoice.exceptionStatus = "closed"
  invoice.events.push(...row.events)
  if (row.events.length > 0) model.rowsTaken.add("D18-outbox-once")
}

const stampField = (model: Model, field: StampedField, context: { readonly note?: string; readonly action?: CloseAction }) => {
  const invoice = model.invoice
  switch (field) {
    case "paymentDetectedAt":
    case "confirmedAt":
    case "paidOutOfBandAt":
      invoice[field] ??= model.now
      return
    case "paidOutOfBandNote":
      invoice.paidOutOfBandNote = context.note ?? null
      return
    case "exceptionAction":
      invoice.exceptionAction = context.action ?? "mark_paid_out_of_band"
      return
    case "exceptionNote":
      invoice.exceptionNote = context.note ?? null
      return
    case "exceptionClosedAt":
      invoice.exceptionClosedAt = model.now
  }
}

export const sums = (model: Model) => {
  let received = 0n
  let confirmed = 0n
  let onTime = 0n
  let onTimeConfirmed = 0n
  for (const payment of model.payments) {
    if (!payment.valid) continue
    received += payment.micros
    if (payment.confirmed) confirmed += payment.micros
    if (!payment.late) {
      onTime += payment.micros
      if (payment.confirmed) onTimeConfirmed += payment.micros
    }
  }
  return { received, confirmed, onTime, onTimeConfirmed }
}

const isDetectionStatus = (status: Status) => status === "awaiting_payment" || status === "partially_paid" || status === "payment_detected"
const isLateStatus = (status: Status) => status === "expired" || status === "voided"

/** The detection-driven moves (S5-S7, D1), from the on-time payments. */
const detect = (model: Model) => {
  const invoice = model.invoice
  if (!isDetectionStatus(invoice.status)) return
  const { onTime, onTimeConfirmed } = sums(model)
  const level = onTime === 0n ? "awaiting_payment" : onTime < AMOUNT_MICROS ? "partially_paid" : onTimeConfirmed >= AMOUNT_MICROS ? "confirmed" : "payment_detected"
  if (level === invoice.status) return
  if (level === "awaiting_payment") return take(model, "D1-back-to-awaiting")
  if (level === "partially_paid") return take(model, "S5-partially-paid")
  if (level === "payment_detected") return take(model, "S6-payment-detected")
  // S7's note: sufficient payment is first detected when it is confirmed in one observation
  invoice.paymentDetectedAt ??= model.now
  take(model, "S7-confirmed")
}

/** The exception of an expired or voided invoice follows its late payment (S9, D6, D7, D19). */
const judgeLate = (model: Model, newLatePayment: boolean) => {
  const invoice = model.invoice
  if (!isLateStatus(invoice.status)) return
  const { received } = sums(model)
  const enough = received >= AMOUNT_MICROS
  if (invoice.exceptionStatus === null || (invoice.exceptionStatus === "closed" && newLatePayment)) {
    if (received === 0n) return
    const reopened = invoice.exceptionStatus === "closed"
    if (reopened) model.rowsTaken.add("D7-reopen-after-closed")
    take(model, enough ? "S9-late-payment" : "D6-late-partial")
    return
  }
  if (invoice.exceptionStatus !== "open") {
    if (received > 0n) model.rowsTaken.add("D22-only-new-late-payment-reopens")
    return
  }
  if (invoice.exceptionType === "partial_payment" && enough) take(model, "D19-late-type-follows-total")
  else if (invoice.exceptionType === "late_payment" && !enough) {
    model.rowsTaken.add("D19-late-type-follows-total")
    invoice.exceptionType = "partial_payment"
    invoice.events.push("invoice_exception_opened")
  }
}

/** D13: a confirmed invoice left short once its reorganisation is judged; D23: again after the merchant closed that exception. */
const judgeReorg = (model: Model) => {
  const invoice = model.invoice
  if (invoice.status !== "confirmed" || invoice.exceptionStatus === "open") return
  if (sums(model).received < AMOUNT_MICROS) take(model, invoice.exceptionStatus === "closed" ? "D23-loss-after-closed-reopens" : "D13-reorg-settles-short")
}

/** The deadline (S8, D4), when it has passed and the invoice has no sufficient on-time payment. */
const deadline = (model: Model) => {
  const invoice = model.invoice
  if (invoice.status === "awaiting_payment") return take(model, "S8-expired")
  if (invoice.status === "partially_paid") {
    model.rowsTaken.add("S8-expired")
    return take(model, "D4-expired-with-partial")
  }
  if (invoice.status === "payment_detected") model.rowsTaken.add("D3-detected-does-not-expire")
}

/**
 * Judges the invoice after its evidence changed. Late evidence means the deadline has passed
 * before it; on-time evidence is judged before a deadline that has passed meanwhile.
 */
const settle = (model: Model, changedIsLate: boolean, options: { readonly newLatePayment?: boolean; readonly reorgSettled?: boolean } = {}) => {
  const deadlinePassed = changedIsLate || model.now > model.payableUntilAt
  const judge = () => {
    detect(model)
    judgeLate(model, options.newLatePayment === true)
  }
  if (!deadlinePassed) judge()
  else if (changedIsLate) {
    deadline(model)
    judge()
  } else {
    judge()
    deadline(model)
  }
  if (options.reorgSettled === true) judgeReorg(model)
}

const pick = (model: Model, index: number) => model.payments.length === 0 ? undefined : model.payments[index % model.payments.length]

/** The chain time a command names, in epoch milliseconds. */
export const chainTimeOf = (model: Model, at: { readonly from: "now" | "deadline"; readonly offsetMs: number }) =>
  at.from === "now" ? model.now - at.offsetMs : model.payableUntilAt + at.offsetMs

/** The micro-dollars (= atomic units of the 1:1 USDC options) a pay command pays, from the model as it is before the command. */
export const payMicros = (model: Model, command: { readonly usd: number | "rest"; readonly unit?: -1 | 0 | 1 }): bigint => {
  const owed = AMOUNT_MICROS - sums(model).received
  const base = command.usd === "rest" ? (owed > 0n ? owed : AMOUNT_MICROS) : BigInt(Math.round(command.usd * 100)) * 10_000n
  const micros = base + BigInt(command.unit ?? 0)
  return micros > 0n ? micros : 1n
}

/** Applies one command; returns what the service must answer. `transactionHash` names a new payment's evidence. */
export const step = (model: Model, command: Command, transactionHash: () => string): Outcome => {
  const invoice = model.invoice
  switch (command.kind) {
    case "pay": {
      const chainTime = chainTimeOf(model, command.chainTime)
      const option = model.options[command.option % model.options.length]
      // T1/D14: chain time decides; D5: a voided (or expired) invoice's window is over
      const late = chainTime > model.payableUntilAt || isLateStatus(invoice.status)
      if (!late && chainTime === model.payableUntilAt) model.rowsTaken.add("T1-on-time-at-deadline")
      if (!late && model.dueAt !== undefined && chainTime > model.dueAt) model.rowsTaken.add("T2-due-date-grace")
      if (!late && model.now > model.payableUntilAt) model.rowsTaken.add("D14-chain-time-decides")
      if (late && invoice.status === "voided") model.rowsTaken.add("D5-void-ends-window")
      model.payments.push({
        transactionHash: transactionHash(),
        option: command.option % model.options.length,
        micros: payMicros(model, command),
        chainTime,
        order: model.payments.length,
        late,
        confirmations: command.confirmations,
        confirmed: command.confirmations >= option.requiredConfirmations,
        valid: true,
        reorgPending: false
      })
      model.rowsTaken.add("F2-coverage-and-amounts")
      if (!late && sums(model).onTime > AMOUNT_MICROS) model.rowsTaken.add("R2-overpayment")
      settle(model, late, { newLatePayment: late })
      return "ok"
    }
    case "duplicate":
    case "observe": {
      const payment = pick(model, command.payment)
      if (payment === undefined) return "ok"
      model.rowsTaken.add("I1-evidence-once")
      const confirmations = command.kind === "duplicate" || command.confirmations === "same" ? payment.confirmations : command.confirmations
      const mempool = command.kind === "observe" && command.mempool === true
      // a mempool sighting of evidence that counts changes nothing
      if (mempool && payment.valid) return "ok"
      if (!payment.valid) model.rowsTaken.add(mempool ? "I2-reinclusion-after-mempool" : "I3-confirms-afresh")
      const required = model.options[payment.option].requiredConfirmations
      const confirmed = (payment.valid && payment.confirmed) || confirmations >= required
      if (payment.valid && payment.confirmations === confirmations && payment.confirmed === confirmed) return "ok"
      payment.confirmations = confirmations
      payment.confirmed = confirmed
      payment.valid = true
      payment.reorgPending = false
      settle(model, payment.late)
      return "ok"
    }
    case "invalidate": {
      const payment = pick(model, command.payment)
      if (payment === undefined || !payment.valid) return "ok"
      const deferred = invoice.status === "confirmed" && command.reorgPoint
      if (invoice.status === "confirmed") model.rowsTaken.add("D2-confirmed-is-final")
      payment.valid = false
      payment.reorgPending = deferred
      settle(model, payment.late, { reorgSettled: !deferred })
      return "ok"
    }
    case "settleReorg": {
      const payment = pick(model, command.payment)
      if (payment === undefined || !payment.reorgPending) return "ok"
      payment.reorgPending = false
      settle(model, payment.late, { reorgSettled: true })
      return "ok"
    }
    case "advance":
      model.now += command.ms
      return "ok"
    case "watcher":
      // only a watched network's watcher holds the sweeper back
      if (model.watchers.has(command.network)) model.watchers.set(command.network, command.chainTime === null ? null : chainTimeOf(model, command.chainTime))
      return "ok"
    case "sweep": {
      if (!(model.now > model.payableUntilAt)) return "ok"
      if (invoice.status !== "awaiting_payment" && invoice.status !== "partially_paid") return "ok"
      const lagging = model.options.some((option) => {
        if (!model.watchers.has(option.network)) return false
        const processed = model.watchers.get(option.network)
        return processed === null || processed === undefined || processed < model.payableUntilAt
      })
      if (lagging) {
        model.rowsTaken.add("D15-sweeper-waits-for-watcher")
        return "ok"
      }
      deadline(model)
      return "ok"
    }
    case "void":
      if (invoice.status !== "awaiting_payment") {
        model.rowsTaken.add("S3-void-refused")
        return "refused"
      }
      take(model, "S2-void")
      return "ok"
    case "record": {
      if (invoice.status !== "awaiting_payment" && invoice.status !== "partially_paid" && invoice.status !== "expired") {
        model.rowsTaken.add("D16-record-payment-refused")
        return "refused"
      }
      if (invoice.exceptionStatus === "open") take(model, "D11-record-payment-closes-exception", { note: command.note, action: "mark_paid_out_of_band" })
      else take(model, "S4-record-payment", { note: command.note })
      return "ok"
    }
    case "close": {
      if (invoice.exceptionStatus !== "open") {
        model.rowsTaken.add("D20-close-needs-open-exception")
        return "refused"
      }
      const context = { note: command.note, action: command.action }
      if (command.action === "accept_late_payment") {
        if (invoice.exceptionType !== "late_payment") {
          model.rowsTaken.add("D8-accept-late-only-for-late")
          return "refused"
        }
        const unconfirmed = model.payments.some((payment) => payment.valid && payment.confirmations < model.options[payment.option].requiredConfirmations)
        if (unconfirmed) {
          model.rowsTaken.add("D12-accept-needs-confirmations")
          return "refused"
        }
        take(model, "S10-accept-late-payment", context)
        return "ok"
      }
      model.rowsTaken.add("R3-close-fields")
      if (command.action === "close_unpaid") take(model, "D10-close-unpaid", context)
      else if (isLateStatus(invoice.status)) take(model, "D9-close-mark-paid-out-of-band", context)
      else take(model, "D21-reorg-close-mark-paid-out-of-band", context)
      return "ok"
    }
  }
}

/** The invoice's observable fields as the model predicts them. */
export interface Expected {
  readonly status: Status
  readonly exceptionType: ExceptionType | null
  readonly exceptionStatus: "open" | "closed" | null
  readonly exceptionAction: CloseAction | null
  readonly exceptionNote: string | null
  readonly exceptionClosedAt: number | null
  readonly paymentDetectedAt: number | null
  readonly confirmedAt: number | null
  readonly paidOutOfBandAt: number | null
  readonly paidOutOfBandNote: string | null
  readonly receivedMicros: bigint
  readonly confirmedMicros: bigint
  readonly paymentCoverage: "no_payment" | "partial_payment" | "exact_payment" | "overpayment"
  readonly remainingMicros: bigint
  readonly overpaymentMicros: bigint
  readonly confirmations: number
  /** undefined where the spec's rule leaves it open (chain times tie). */
  readonly lastTransactionHash: string | null | undefined
  /** F3: the option (its index) and chain time of the latest observed payment, invalidated or not; undefined on a tie. */
  readonly lastPaymentOption: number | null | undefined
  readonly lastPaymentObservedAt: number | null | undefined
  readonly paymentCount: number
  readonly events: ReadonlyArray<EventName>
}

/** Payments in observation order, or undefined when two share a chain time (the order is then not the spec's to say). */
const observationOrder = (payments: ReadonlyArray<ModelPayment>) => {
  const ordered = [...payments].sort((a, b) => a.chainTime - b.chainTime || a.order - b.order)
  const tie = ordered.some((payment, index) => index > 0 && ordered[index - 1].chainTime === payment.chainTime)
  return tie ? undefined : ordered
}

/**
 * D17: the confirmation count that gates the invoice: the highest k such that the valid payments
 * with at least k confirmations cover the amount; while all of them fall short, the smallest count.
 */
export const gatingConfirmations = (model: Model): number => {
  const valid = model.payments.filter((payment) => payment.valid).sort((a, b) => b.confirmations - a.confirmations)
  let sum = 0n
  for (const payment of valid) {
    sum += payment.micros
    if (sum >= AMOUNT_MICROS) return payment.confirmations
  }
  return valid.at(-1)?.confirmations ?? 0
}

/** The least confirmation count over every valid payment (what D17 is not). */
export const leastConfirmations = (model: Model): number => {
  const valid = model.payments.filter((payment) => payment.valid)
  return valid.length === 0 ? 0 : Math.min(...valid.map((payment) => payment.confirmations))
}

export const expected = (model: Model): Expected => {
  const { confirmed, received } = sums(model)
  const ordered = observationOrder(model.payments.filter((payment) => payment.valid))
  const observed = observationOrder(model.payments)
  const latest = observed?.at(-1)
  return {
    ...model.invoice,
    events: [...model.invoice.events],
    receivedMicros: received,
    confirmedMicros: confirmed,
    paymentCoverage: received === 0n ? "no_payment" : received < AMOUNT_MICROS ? "partial_payment" : received === AMOUNT_MICROS ? "exact_payment" : "overpayment",
    remainingMicros: received < AMOUNT_MICROS ? AMOUNT_MICROS - received : 0n,
    overpaymentMicros: received > AMOUNT_MICROS ? received - AMOUNT_MICROS : 0n,
    confirmations: gatingConfirmations(model),
    lastTransactionHash: ordered === undefined ? undefined : ordered.at(-1)?.transactionHash ?? null,
    lastPaymentOption: observed === undefined ? undefined : latest?.option ?? null,
    lastPaymentObservedAt: observed === undefined ? undefined : latest?.chainTime ?? null,
    paymentCount: model.payments.length
  }
}
