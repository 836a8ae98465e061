/** Payment timing: the two shapes of the spec, resolved against the creation time. */
export type PaymentTimingInput =
  | { readonly mode: "immediate"; readonly expiresAfterMinutes: number }
  | { readonly mode: "due_date"; readonly dueAfterDays: number; readonly gracePeriodDays: number }

export type ResolvedTiming =
  | { readonly mode: "immediate"; readonly expiresAfterMinutes: number; readonly payableUntilAt: Date }
  | {
    readonly mode: "due_date"
    readonly dueAfterDays: number
    readonly gracePeriodDays: number
    readonly dueAt: Date
    readonly payableUntilAt: Date
  }

/** The payment timing of an account that has not saved checkout settings yet. */
export const DEFAULT_PAYMENT_TIMING: PaymentTimingInput = { mode: "immediate", expiresAfterMinutes: 60 }

export const TIMING_BOUNDS = {
  expiresAfterMinutes: { min: 5, max: 10_080 },
  dueAfterDays: { min: 1, max: 365 },
  gracePeriodDays: { min: 0, max: 90 }
} as const

const MINUTE = 60_000
const DAY = 86_400_000

export const resolveTiming = (timing: PaymentTimingInput, createdAt: Date): ResolvedTiming => {
  if (timing.mode === "immediate") {
    return { ...timing, payableUntilAt: new Date(createdAt.getTime() + timing.expiresAfterMinutes * MINUTE) }
  }
  const dueAt = new Date(createdAt.getTime() + timing.dueAfterDays * DAY)
  return { ...timing, dueAt, payableUntilAt: new Date(dueAt.getTime() + timing.gracePeriodDays * DAY) }
}
