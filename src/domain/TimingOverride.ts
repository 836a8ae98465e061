import { InvalidRequest } from "./Errors.ts"
import type { PaymentTimingInput } from "./Timing.ts"

export interface TimingOverrideInput {
  readonly mode: "immediate" | "due_date"
  readonly expiresAfterMinutes?: number | undefined
  readonly dueAfterDays?: number | undefined
  readonly gracePeriodDays?: number | undefined
}

/** Completes the shape checks that depend on `mode` (bounds are checked by the request schema). */
export const timingFromOverride = (input: TimingOverrideInput): PaymentTimingInput | InvalidRequest => {
  const invalid = (message: string) => new InvalidRequest({ message: `paymentTiming.${message}` })
  if (input.mode === "immediate") {
    if (input.dueAfterDays !== undefined) return invalid("dueAfterDays is not allowed with mode immediate")
    if (input.gracePeriodDays !== undefined) return invalid("gracePeriodDays is not allowed with mode immediate")
    if (input.expiresAfterMinutes === undefined) return invalid("expiresAfterMinutes is required")
    return { mode: "immediate", expiresAfterMinutes: input.expiresAfterMinutes }
  }
  if (input.expiresAfterMinutes !== undefined) return invalid("expiresAfterMinutes is not allowed with mode due_date")
  if (input.dueAfterDays === undefined) return invalid("dueAfterDays is required")
  return { mode: "due_date", dueAfterDays: input.dueAfterDays, gracePeriodDays: input.gracePeriodDays ?? 0 }
}
