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
 * Every field of a timing override that does not fit its `mode`, and why; none when `mode` is
 * neither of the two (the request schema says so). Bounds are the schema's; these run where the
 * request's fields are ranked in body order (SchemaErrors, the create handler), never after a lookup.
 */
export const timingOverrideProblems = (input: { readonly [Field in keyof TimingOverrideInput]?: unknown }): ReadonlyArray<TimingOverrideProblem> => {
  const problems: Array<TimingOverrideProblem> = []
  if (input.mode === "immediate") {
    if (input.dueAfterDays !== undefined) problems.push({ field: "dueAfterDays", constraint: "is not allowed with mode immediate" })
    if (input.gracePeriodDays !== undefined) problems.push({ field: "gracePeriodDays", constraint: "is not allowed with mode immediate" })
    if (input.expiresAfterMinutes === undefined) problems.push({ field: "expiresAfterMinutes", constraint: "is required" })
  } else if (input.mode === "due_date") {
    if (input.expiresAfterMinutes !== undefined) problems.push({ field: "expiresAfterMinutes", constraint: "is not allowed with mode due_date" })
    if (input.dueAfterDays === undefined) problems.push({ field: "dueAfterDays", constraint: "is required" })
  }
  return problems
}

/** The first of `timingOverrideProblems` (in the fields' fixed order). */
export const timingOverrideProblem = (input: TimingOverrideInput): TimingOverrideProblem | undefined => timingOverrideProblems(input)[0]
