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

type ApiErrorClass = (new(props: { readonly error: string }) => ApiError) & { readonly ast: { readonly annotations?: { readonly httpApiStatus?: unknown } | undefined } }

const CLASSES: ReadonlyArray<ApiErrorClass> = [BadRequest, Unauthorized, Forbidden, NotFound, Conflict, BadGateway, ServiceUnavailable, TooManyRequests]

const annotatedStatus = (errorClass: ApiErrorClass): number => {
  const status = errorClass.ast.annotations?.httpApiStatus
  return typeof status === "number" ? status : 500
}

const CLASS_BY_STATUS = new Map(CLASSES.map((errorClass) => [annotatedStatus(errorClass), errorClass]))

/** The status an error answers with: its schema's `httpApiStatus` annotation. */
export const statusOf = (error: ApiError): number => annotatedStatus(error.constructor as ApiErrorClass)

/** The error of that status with that message (a stored answer replayed); Conflict for a status no class declares. */
export const errorOfStatus = (status: number, message: string): ApiError => new (CLASS_BY_STATUS.get(status) ?? Conflict)({ error: message })
