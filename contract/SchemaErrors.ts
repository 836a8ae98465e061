import { HttpApiMiddleware } from "effect/http-api"
import { BadRequest } from "./ApiErrors.ts"

/** Turns every request decoding failure into the spec's 400 `{error}` naming the first invalid field (the service provides its layer). */
export class SchemaErrors extends HttpApiMiddleware.Service<SchemaErrors>()("Http/SchemaErrors", {
  error: BadRequest
}) {}
