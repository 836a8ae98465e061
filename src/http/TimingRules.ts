import { Effect } from "effect"
import { type TimingOverrideInput, timingOverrideProblems } from "../domain/TimingOverride.ts"
import { RequestErrors } from "./RequestErrors.ts"
import { bodyAsSent } from "./SchemaErrors.ts"
import { ruleMessage } from "./ValidationMessage.ts"
import { paymentTimingRules } from "../../contract/BodyRules.ts"

export { paymentTimingRules }

/**
 * The same rules for a body the schema accepted, run by the handler (where a create runs them inside
 * its idempotency claim, so that their 400 is stored for the key). Decoding keeps the schema's key
 * order, so with two problems the body as sent decides which one is named.
 */
export const paymentTimingChecked = (override: TimingOverrideInput | null | undefined) => {
  const problems = override === null || override === undefined ? [] : timingOverrideProblems(override)
  if (problems.length === 0) return Effect.void
  if (problems.length === 1) return Effect.fail(RequestErrors.invalidTiming(problems[0]))
  return Effect.flatMap(bodyAsSent,
    (body) => Effect.fail(RequestErrors.invalidField(ruleMessage(paymentTimingRules(body), body) ?? `paymentTiming.${problems[0].field} ${problems[0].constraint}`)))
}
