import { PaymentCoverage } from "../../contract/Statuses.ts"
import { maxBig, Micros } from "./Money.ts"

/** The coverage values are the contract's (contract/Statuses.ts); the rule that picks one is here. */
export { PaymentCoverage }

export interface CoverageSummary {
  readonly paymentCoverage: PaymentCoverage
  readonly receivedMicros: Micros
  readonly confirmedMicros: Micros
  readonly remainingMicros: Micros
  readonly overpaymentMicros: Micros
}

export const coverageOf = (amount: bigint, received: bigint): PaymentCoverage =>
  received === 0n ? "no_payment" : received < amount ? "partial_payment" : received === amount ? "exact_payment" : "overpayment"

/** What is still owed in USD: the amount less what the valid payments are worth, never below 0. Per option in atomic units: Evidence.remainingAtomic, built on this. */
export const owedMicros = (amount: bigint, received: bigint): Micros => Micros.make(maxBig(0n, amount - received))

export const summarize = (amount: Micros, received: Micros, confirmed: Micros): CoverageSummary => ({
  paymentCoverage: coverageOf(amount, received),
  receivedMicros: received,
  confirmedMicros: confirmed,
  remainingMicros: owedMicros(amount, received),
  overpaymentMicros: Micros.make(maxBig(0n, received - amount))
})
