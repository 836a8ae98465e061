import { Context, Effect, Option } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { BadRequest } from "./ApiErrors.ts"
import { RequestErrors } from "./RequestErrors.ts"
import { type FieldProblem, validationMessage } from "./ValidationMessage.ts"

/** Turns every request decoding failure into the spec's 400 `{error}` naming the first invalid field. */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("Http/SchemaErrors", {
  error: BadRequest
}) {}

/**
 * An endpoint's rules between body fields that its payload schema does not state (they run in its
 * handler): on a schema failure their problems of the body as sent compete with the schema's, so
 * that the first invalid field in the body is named whichever check finds it.
 */
export class BodyRules extends Context.Service<BodyRules, (body: unknown) => ReadonlyArray<FieldProblem>>()("Http/BodyRules") {}

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
