import { Schema } from "effect"

/**
 * The HTTP errors of the API, one schema error per status. Each encodes to exactly the spec's
 * `{ "error": <message> }` body (Schema.Error adds no `_tag`) and carries its status as the
 * `httpApiStatus` annotation, which the builder, the OpenAPI document and the idempotency replay
 * read. Endpoints list the ones they can answer (`error: [...]`). A feature never constructs them
 * at a throw site: its errors module (e.g. accounts/AccountErrors.ts) declares each error once,
 * with its message, and handlers fail with those.
 */
const body = { error: Schema.String }

export class BadRequest extends Schema.Error<BadRequest>("BadRequest")(body, { httpApiStatus: 400 }) {}
export class Unauthorized extends Schema.Error<Unauthorized>("Unauthorized")(body, { httpApiStatus: 401 }) {}
export class Forbidden extends Schema.Error<Forbidden>("Forbidden")(body, { httpApiStatus: 403 }) {}
export class NotFound extends Schema.Error<NotFound>("NotFound")(body, { httpApiStatus: 404 }) {}
export class Conflict extends Schema.Error<Conflict>("Conflict")(body, { httpApiStatus: 409 }) {}
export class BadGateway extends Schema.Error<BadGateway>("BadGateway")(body, { httpApiStatus: 502 }) {}
export class ServiceUnavailable extends Schema.Error<ServiceUnavailable>("ServiceUnavailable")(body, { httpApiStatus: 503 }) {}
export class TooManyRequests extends Schema.Error<TooManyRequests>("TooManyRequests")(body, { httpApiStatus: 429 }) {}

export type ApiError =
  | BadRequest
  | Unauthorized
  | Forbidden
  | NotFound
  | Conflict
  | BadGateway
  | ServiceUnavailable
  | TooManyRequests
