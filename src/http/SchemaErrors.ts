import { Effect } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { BadRequest } from "./ApiErrors.ts"
import { RequestErrors } from "./RequestErrors.ts"
import { validationMessage } from "./ValidationMessage.ts"

/** Turns every request decoding failure into the spec's 400 `{error}` naming the first invalid field. */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("Http/SchemaErrors", {
  error: BadRequest
}) {}

const subjectOf = (kind: string) => (kind === "Params" ? "Path parameter" : kind === "Query" ? "Query" : kind === "Headers" ? "Header" : "Request body")

/** The body as sent, to name its first invalid field in its own order; undefined when it is not JSON. */
const bodyAsSent = Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => request.json).pipe(
  Effect.orElseSucceed(() => undefined)
)

export const SchemaErrorsLive = HttpApiMiddleware.layerSchemaErrorTransform(SchemaErrors,
  (schemaError) =>
    Effect.flatMap(schemaError.kind === "Payload" ? bodyAsSent : Effect.undefined, (input) =>
      Effect.fail(RequestErrors.invalidField(validationMessage(schemaError.cause.issue, subjectOf(schemaError.kind), input)))))
