import type { PaymentTimingInput } from "./Timing.ts"
import type { TimingOverrideInput } from "../../contract/TimingOverride.ts"

/** The rules of a timing override are part of the merchant API's contract (contract/TimingOverride.ts). */
export * from "../../contract/TimingOverride.ts"

/** The timing of an override the request schema has accepted (`timingOverrideProblem` found nothing). */
export const timingFromOverride = (input: TimingOverrideInput): PaymentTimingInput =>
  input.mode === "immediate"
    ? { mode: "immediate", expiresAfterMinutes: input.expiresAfterMinutes ?? 0 }
    : { mode: "due_date", dueAfterDays: input.dueAfterDays ?? 0, gracePeriodDays: input.gracePeriodDays ?? 0 }
