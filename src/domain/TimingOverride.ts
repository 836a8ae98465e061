import type { PaymentTimingInput } from "./Timing.ts"

export interface TimingOverrideInput {
  readonly mode: "immediate" | "due_date"
  readonly expiresAfterMinutes?: number | undefined
  readonly dueAfterDays?: number | undefined
  readonly gracePeriodDays?: number | undefined
}

/** A field of a timing override that does not fit its `mode`, and why. */
export interface TimingOverrideProblem {
  readonly field: "expiresAfterMinutes" | "dueAfterDays" | "gracePeriodDays"
  readonly constraint: string
}

/**
 * The shape checks that depend on `mode` (bounds are checked by the request schema, which also
 * runs this one, so a bad override is refused at the edge before any lookup).
 */
export const timingOverrideProblem = (input: TimingOverrideInput): TimingOverrideProblem | undefined => {
  if (input.mode === "immediate") {
    if (input.dueAfterDays !== undefined) return { field: "dueAfterDays", constraint: "is not allowed with mode immediate" }
    if (input.gracePeriodDays !== undefined) return { field: "gracePeriodDays", constraint: "is not allowed with mode immediate" }
    if (input.expiresAfterMinutes === undefined) return { field: "expiresAfterMinutes", constraint: "is required" }
    return undefined
  }
  if (input.expiresAfterMinutes !== undefined) return { field: "expiresAfterMinutes", constraint: "is not allowed with mode due_date" }
  if (input.dueAfterDays === undefined) return { field: "dueAfterDays", constraint: "is required" }
  return undefined
}

/** The timing of an override the request schema has accepted (`timingOverrideProblem` found nothing). */
export const timingFromOverride = (input: TimingOverrideInput): PaymentTimingInput =>
  input.mode === "immediate"
    ? { mode: "immediate", expiresAfterMinutes: input.expiresAfterMinutes ?? 0 }
    : { mode: "due_date", dueAfterDays: input.dueAfterDays ?? 0, gracePeriodDays: input.gracePeriodDays ?? 0 }
