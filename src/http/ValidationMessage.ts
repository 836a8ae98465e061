import { SchemaAST, SchemaIssue } from "effect"

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

/**
 * The spec's validation message for a schema failure: the first invalid field's path followed
 * by its constraint, e.g. `metadata.notes must be at most 140 characters`.
 */
export const validationMessage = (issue: SchemaIssue.Issue, subject = "Request body"): string => {
  const first = formatter(issue).issues[0]
  if (first === undefined) return `${subject} is invalid`
  const path = (first.path ?? [])
    .map((segment) => (typeof segment === "object" ? segment.key : segment))
    .map((key, index) => (typeof key === "number" ? `[${key}]` : `${index === 0 ? "" : "."}${String(key)}`))
    .join("")
  return `${path === "" ? subject : path} ${normalize(first.message)}`
}

/** Library defaults that can still surface (codec-level failures) in the spec's wording. */
const normalize = (message: string): string => {
  if (message === "Expected a valid JSON body" || message.startsWith("Expected a valid JSON")) return "must be valid JSON"
  const match = /^Expected (object|number|string|boolean|array)(?: \| null)?$/.exec(message)
  if (match === null) return message
  return match[1] === "object" ? "must be a JSON object" : match[1] === "array" ? "must be an array" : `must be a ${match[1]}`
}
