import { owedMicros } from "./Coverage.ts"
import type { PaymentRecord } from "./Invoice.ts"
import { Micros } from "./Money.ts"

/** How much on-time payment the invoice has: the input of the detection-driven moves. */
export type OnTimeLevel = "none" | "partial" | "sufficient" | "confirmed"
/** How much valid payment the invoice has in all, late payments included. */
export type TotalLevel = "none" | "partial" | "sufficient"

export interface Tally {
  readonly receivedMicros: Micros
  readonly confirmedMicros: Micros
  readonly confirmations: number
  readonly onTime: OnTimeLevel
  readonly total: TotalLevel
}

/** What counting needs of a payment; pure, so any option key will do. */
type Counted = Pick<PaymentRecord, "amountAtomic" | "quotedAtomic" | "confirmedAt" | "late" | "invalidatedAt" | "confirmations"> & {
  readonly paymentOptionId: string
}

/**
 * The USD value of payments, summed per option before rounding: the payments of one option are
 * valued together against its quote, so paying the quote in parts is worth exactly the amount.
 */
const valueOf = (amount: Micros, payments: ReadonlyArray<Counted>): Micros => {
  const byOption = new Map<string, { atomic: bigint; quoted: bigint }>()
  for (const payment of payments) {
    const sum = byOption.get(payment.paymentOptionId)
    if (sum === undefined) byOption.set(payment.paymentOptionId, { atomic: payment.amountAtomic, quoted: payment.quotedAtomic })
    else sum.atomic += payment.amountAtomic
  }
  let value = 0n
  for (const { atomic, quoted } of byOption.values()) value += usdValueOf(atomic, quoted, amount)
  return Micros.make(value)
}

/**
 * What is still owed through one option, in its atomic units (the one rule the payment page and
 * the Solana preparation use): the least amount that, valued with the option's own payments,
 * covers what the other options' valid payments leave owed (Coverage.owedMicros).
 */
export const remainingAtomic = (
  amount: Micros,
  option: { readonly id: string; readonly quotedAtomic: bigint },
  payments: ReadonlyArray<Counted>
): bigint => {
  const counted = payments.filter((payment) => payment.invalidatedAt === null)
  const others = valueOf(amount, counted.filter((payment) => payment.paymentOptionId !== option.id))
  const own = counted.filter((payment) => payment.paymentOptionId === option.id).reduce((sum, payment) => sum + payment.amountAtomic, 0n)
  const owed = owedMicros(amount, others)
  if (owed === 0n) return 0n
  // floor((own + x) * amount / quoted) >= owed  <=>  own + x >= ceil(owed * quoted / amount)
  const needed = (owed * option.quotedAtomic + amount - 1n) / amount
  return needed > own ? needed - own : 0n
}

/**
 * The confirmation count that gates the invoice: the highest count k such that the counted payments
 * with at least k confirmations cover the amount, so a payment beyond the amount (an unconfirmed
 * overpayment) never lowers it; while all of them together fall short, the smallest count among them.
 */
const gatingConfirmations = (amount: Micros, counted: ReadonlyArray<Counted>): number => {
  const byConfirmations = [...counted].sort((a, b) => b.confirmations - a.confirmations)
  for (let taken = 1; taken <= byConfirmations.length; taken++) {
    if (valueOf(amount, byConfirmations.slice(0, taken)) >= amount) return byConfirmations[taken - 1].confirmations
  }
  return byConfirmations.at(-1)?.confirmations ?? 0
}

/** Sums the valid (not invalidated) payments of an invoice into the facts the lifecycle decides on. */
export const tally = (amount: Micros, payments: ReadonlyArray<Counted>): Tally => {
  const counted = payments.filter((payment) => payment.invalidatedAt === null)
  const confirmedOnes = counted.filter((payment) => payment.confirmedAt !== null)
  const onTimeOnes = counted.filter((payment) => !payment.late)
  const received = valueOf(amount, counted)
  const confirmed = valueOf(amount, confirmedOnes)
  const onTimeReceived = valueOf(amount, onTimeOnes)
  const onTimeConfirmed = valueOf(amount, onTimeOnes.filter((payment) => payment.confirmedAt !== null))
  const confirmations = gatingConfirmations(amount, counted)
  const onTime: OnTimeLevel = onTimeReceived === 0n
    ? "none"
    : onTimeReceived < amount
    ? "partial"
    : onTimeConfirmed >= amount
    ? "confirmed"
    : "sufficient"
  const total: TotalLevel = received === 0n ? "none" : received < amount ? "partial" : "sufficient"
  return { receivedMicros: received, confirmedMicros: confirmed, confirmations, onTime, total }
}

/**
 * USD value of a payment at the option's fixed quote: pro rata to the quoted atomic amount, so
 * paying exactly the quote is worth exactly the invoice amount. Rounded down (never over-credits).
 */
export const usdValueOf = (amountAtomic: bigint, quotedAtomic: bigint, invoiceAmount: Micros): Micros =>
  Micros.make(quotedAtomic === 0n ? 0n : (amountAtomic * invoiceAmount) / quotedAtomic)

/**
 * The counted (not invalidated) payment furthest from its option's required confirmations (the
 * smallest share of them), late payments first and, on a tie, the earlier in `payments` (observation
 * order), with what it has and needs; undefined when every counted payment is confirmed.
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
