import { SchemaAST, SchemaIssue } from "effect"
import type { FieldProblem } from "../../contract/BodyRules.ts"

export type { FieldProblem }

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
