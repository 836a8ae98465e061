import type { OnTimeLevel, TotalLevel } from "../lifecycle/InvoiceMachine.ts"
import type { PaymentRecord } from "./Invoice.ts"
import type { Micros } from "./Money.ts"

export interface Tally {
  readonly receivedMicros: Micros
  readonly confirmedMicros: Micros
  readonly confirmations: number
  readonly onTime: OnTimeLevel
  readonly total: TotalLevel
}

type Counted = Pick<PaymentRecord, "usdMicros" | "confirmedAt" | "late" | "invalidatedAt" | "confirmations">

/** Sums the valid (not invalidated) payments of an invoice into the facts the lifecycle decides on. */
export const tally = (amount: Micros, payments: ReadonlyArray<Counted>): Tally => {
  let received = 0n
  let confirmed = 0n
  let onTimeReceived = 0n
  let onTimeConfirmed = 0n
  let confirmations: number | undefined
  for (const payment of payments) {
    if (payment.invalidatedAt !== null) continue
    received += payment.usdMicros
    confirmations = confirmations === undefined ? payment.confirmations : Math.min(confirmations, payment.confirmations)
    if (payment.confirmedAt !== null) confirmed += payment.usdMicros
    if (!payment.late) {
      onTimeReceived += payment.usdMicros
      if (payment.confirmedAt !== null) onTimeConfirmed += payment.usdMicros
    }
  }
  const onTime: OnTimeLevel = onTimeReceived === 0n
    ? "none"
    : onTimeReceived < amount
    ? "partial"
    : onTimeConfirmed >= amount
    ? "confirmed"
    : "sufficient"
  const total: TotalLevel = received === 0n ? "none" : received < amount ? "partial" : "sufficient"
  return { receivedMicros: received, confirmedMicros: confirmed, confirmations: confirmations ?? 0, onTime, total }
}

/**
 * USD value of a payment at the option's fixed quote: pro rata to the quoted atomic amount, so
 * paying exactly the quote is worth exactly the invoice amount. Rounded down (never over-credits).
 */
export const usdValueOf = (amountAtomic: bigint, quotedAtomic: bigint, invoiceAmount: Micros): Micros =>
  quotedAtomic === 0n ? 0n : (amountAtomic * invoiceAmount) / quotedAtomic

/**
 * The counted (not invalidated) payment furthest from its option's required confirmations, late
 * payments first, with what it has and needs; undefined when every counted payment is confirmed.
 */
export const leastConfirmedPayment = (
  payments: ReadonlyArray<Pick<PaymentRecord, "paymentOptionId" | "confirmations" | "late" | "invalidatedAt">>,
  requiredConfirmations: (paymentOptionId: string) => number
): { readonly confirmations: number; readonly required: number } | undefined => {
  let worst: { readonly confirmations: number; readonly required: number; readonly late: boolean } | undefined
  for (const payment of payments) {
    if (payment.invalidatedAt !== null) continue
    const required = requiredConfirmations(payment.paymentOptionId)
    if (payment.confirmations >= required) continue
    const candidate = { confirmations: payment.confirmations, required, late: payment.late }
    if (
      worst === undefined || (candidate.late && !worst.late) ||
      (candidate.late === worst.late && candidate.confirmations / candidate.required < worst.confirmations / worst.required)
    ) worst = candidate
  }
  return worst === undefined ? undefined : { confirmations: worst.confirmations, required: worst.required }
}
