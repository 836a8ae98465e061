import { Context } from "effect"
import { timingOverrideProblems } from "./TimingOverride.ts"

/** A rule the schema cannot state (one field against another), broken at `path`: the message is `<path> <constraint>`. */
export interface FieldProblem {
  readonly path: ReadonlyArray<string | number>
  readonly constraint: string
}

/**
 * An endpoint's rules between body fields that its payload schema does not state (they run in its
 * handler): on a schema failure their problems of the body as sent compete with the schema's, so
 * that the first invalid field in the body is named whichever check finds it.
 */
export class BodyRules extends Context.Service<BodyRules, (body: unknown) => ReadonlyArray<FieldProblem>>()("Http/BodyRules") {}

const asRecord = (value: unknown): Readonly<Record<string, unknown>> | undefined =>
  typeof value === "object" && value !== null && !Array.isArray(value) ? value as Record<string, unknown> : undefined

/**
 * paymentTiming's fields against its mode, in a body as sent: the endpoints that take a
 * paymentTiming annotate themselves with it (BodyRules), so that a body that also fails its schema
 * names whichever comes first in the body.
 */
export const paymentTimingRules = (body: unknown): ReadonlyArray<FieldProblem> => {
  const timing = asRecord(asRecord(body)?.paymentTiming)
  return timing === undefined ? [] : timingOverrideProblems(timing).map(({ constraint, field }) => ({ path: ["paymentTiming", field], constraint }))
}
