import { Context, Effect, Option, SchemaAST, SchemaIssue } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { BodyRules, type FieldProblem, paymentTimingRules } from "../../contract/BodyRules.ts"
import { SchemaErrors } from "../../contract/SchemaErrors.ts"
import { type TimingOverrideInput, timingOverrideProblems } from "../domain/TimingOverride.ts"
import { RequestErrors } from "./ApiErrors.ts"

/**
 * A request that fails validation answers 400 with the spec's message: the first invalid field's
 * path and its constraint, in the order of the body as sent. The schema's failures (through the
 * SchemaErrors middleware, declared in contract/SchemaErrors.ts) and the endpoint's own rules
 * (contract/BodyRules.ts; the payment timing's, run again by the handler) are worded here.
 */

export type { FieldProblem }
export { BodyRules, paymentTimingRules, SchemaErrors }

const expected = (ast: SchemaAST.AST): string => {
  switch (ast._tag) {
    case "Number":
      return "must be a number"
    case "String":
      return "must be a string"
    case "Boolean":
      return "must be a boolean"
    case "Arrays":
      return "must be an array"
    case "Literal":
      return `must be ${JSON.stringify(ast.literal)}`
    case "Union": {
      const member = ast.types.find((type) => type._tag !== "Null" && type._tag !== "Undefined")
      return member === undefined ? "is invalid" : expected(member)
    }
    default:
      return "must be a JSON object"
  }
}

const customMessage = (issue: SchemaIssue.Leaf): string | undefined => {
  if (issue._tag === "MissingKey") return issue.annotations?.messageMissingKey ?? "is required"
  // Request bodies are decoded with onExcessProperty "error" (Api.ts): money is at stake, so a
  // field the service does not know (`currency`) is refused rather than ignored.
  if (issue._tag === "UnexpectedKey") return "is not a known field"
  if (issue._tag === "InvalidType") {
    const message = issue.ast.annotations?.message
    return typeof message === "string" ? message : expected(issue.ast)
  }
  return undefined
}

const formatter = SchemaIssue.makeFormatterStandardSchemaV1({
  leafHook: (issue) => customMessage(issue) ?? SchemaIssue.defaultLeafHook(issue)
})

type IssuePath = ReadonlyArray<PropertyKey | { readonly key: PropertyKey }>

/**
 * Where a path points within the request as sent: at each level the position of its key among the
 * body's keys (an array's index as it is); a key the body lacks (a missing field) comes after them.
 */
const placeOf = (input: unknown, path: IssuePath): ReadonlyArray<number> => {
  const place: Array<number> = []
  let current = input
  for (const segment of path) {
    const key = typeof segment === "object" ? segment.key : segment
    if (Array.isArray(current) && typeof key === "number") place.push(key)
    else if (typeof current === "object" && current !== null) {
      const index = Object.keys(current).indexOf(String(key))
      place.push(index === -1 ? Number.MAX_SAFE_INTEGER : index)
    } else place.push(Number.MAX_SAFE_INTEGER)
    current = typeof current === "object" && current !== null ? (current as Record<PropertyKey, unknown>)[key] : undefined
  }
  return place
}

const before = (a: ReadonlyArray<number>, b: ReadonlyArray<number>): boolean => {
  for (let index = 0; index < Math.min(a.length, b.length); index++) {
    if (a[index] !== b[index]) return a[index] < b[index]
  }
  return a.length < b.length
}

const pathText = (path: IssuePath) =>
  path
    .map((segment) => (typeof segment === "object" ? segment.key : segment))
    .map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`))
    .join("")

/** The first of `problems` in the order of the request as sent (`input`); on a tie, the earlier in the list. */
const firstInBodyOrder = <P extends { readonly path?: IssuePath | undefined }>(problems: ReadonlyArray<P>, input: unknown): P | undefined => {
  let first = problems[0]
  if (first === undefined || input === undefined) return first
  let firstPlace = placeOf(input, first.path ?? [])
  for (const candidate of problems.slice(1)) {
    const place = placeOf(input, candidate.path ?? [])
    if (before(place, firstPlace)) [first, firstPlace] = [candidate, place]
  }
  return first
}

/** The message of the first of `problems` in the order of the request as sent; undefined without any. */
export const ruleMessage = (problems: ReadonlyArray<FieldProblem>, input: unknown): string | undefined => {
  const first = firstInBodyOrder(problems, input)
  return first === undefined ? undefined : `${pathText(first.path)} ${first.constraint}`
}

/**
 * The spec's validation message for a schema failure: the first invalid field's path followed
 * by its constraint, e.g. `metadata.notes must be at most 140 characters`. With the request as
 * sent (`input`), "first" is in the body's order (the schema reports every failure, and `rules`
 * the endpoint's own problems of that input compete with them); without it, in the schema's.
 */
export const validationMessage = (issue: SchemaIssue.Issue, subject = "Request body", input?: unknown, rules: ReadonlyArray<FieldProblem> = []): string => {
  const issues = [
    ...formatter(issue).issues.map(({ message, path }) => ({ path: path ?? [], message: normalize(message) })),
    ...rules.map(({ constraint, path }) => ({ path, message: constraint }))
  ]
  const first = firstInBodyOrder(issues, input)
  if (first === undefined) return `${subject} is invalid`
  const path = pathText(first.path)
  return `${path === "" ? subject : path} ${first.message}`
}

/** Library defaults that can still surface (codec-level failures) in the spec's wording. */
const normalize = (message: string): string => {
  if (message === "Expected a valid JSON body" || message.startsWith("Expected a valid JSON")) return "must be valid JSON"
  const match = /^Expected (object|number|string|boolean|array)(?: \| null)?$/.exec(message)
  if (match === null) return message
  return match[1] === "object" ? "must be a JSON object" : match[1] === "array" ? "must be an array" : `must be a ${match[1]}`
}

// The SchemaErrors middleware: a schema failure as that 400.

const subjectOf = (kind: string) => (kind === "Params" ? "Path parameter" : kind === "Query" ? "Query" : kind === "Headers" ? "Header" : "Request body")

/** The body as sent, to name its first invalid field in its own order; undefined when it is not JSON. */
export const bodyAsSent = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => request.json).pipe(
  Effect.orElseSucceed(() => undefined)
)

export const SchemaErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors,
  (schemaError, { endpoint }) =>
    Effect.flatMap(schemaError.kind === "Payload" ? bodyAsSent : Effect.undefined, (input) => {
      const rules = input === undefined ? [] : Option.match(Context.getOption(endpoint.annotations, BodyRules), { onNone: () => [], onSome: (rulesOf) => rulesOf(input) })
      return Effect.fail(RequestErrors.invalidField(validationMessage(schemaError.cause.issue, subjectOf(schemaError.kind), input, rules)))
    }))

// The payment timing's rules, run by the handler.

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
