import { Effect } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { BadRequest } from "./ApiErrors.ts"
import { validationMessage } from "./ValidationMessage.ts"

/** Turns every request decoding failure into the spec's 400 `{error}` naming the first invalid field. */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("Http/SchemaErrors", {
  error: BadRequest
}) {}

const subjectOf = (kind: string) => (kind === "Params" ? "Path parameter" : kind === "Query" ? "Query" : kind === "Headers" ? "Header" : "Request body")

export const SchemaErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors, (schemaError) => {
  const message = validationMessage(schemaError.cause.issue, subjectOf(schemaError.kind))
  return Effect.fail(new BadRequest({ error: message }))
})
