import { Context, Effect, Option } from "effect"
import { HttpApiMiddleware } from "effect/http-api"
import { HttpServerRequest } from "effect/http"
import { BodyRules } from "../../contract/BodyRules.ts"
import { SchemaErrors } from "../../contract/SchemaErrors.ts"
import { RequestErrors } from "./RequestErrors.ts"
import { validationMessage } from "./ValidationMessage.ts"

/** The middleware is declared in the contract (contract/SchemaErrors.ts); its layer, which words the 400, is the service's. */
export { BodyRules, SchemaErrors }

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
