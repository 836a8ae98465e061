import { Effect, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import type * as Errors from "../domain/Errors.ts"
import { RateLimited } from "../domain/Errors.ts"
import type { TimingOverrideProblem } from "../domain/TimingOverride.ts"
import { statusesAccepting } from "../lifecycle/Lifecycle.ts"
import { type ApiError, BadGateway, BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests } from "../../contract/ApiErrors.ts"

/**
 * The API's error story, in one place: the error schemas (one per status, the contract's), the
 * errors every feature shares and the transport answers given outside HttpApi, the HTTP form of
 * the shared domain errors, and the rate-limit answer. Request validation's 400 is worded in
 * ValidationErrors.ts; input refused before routing in RequestLimits.ts.
 */

/** The API's error schemas are the contract's (contract/ApiErrors.ts), shared with the SDK; here, what the service reads of them. */
export * from "../../contract/ApiErrors.ts"

type ApiErrorClass = (new(props: { readonly error: string }) => ApiError) & { readonly ast: { readonly annotations?: { readonly httpApiStatus?: unknown } | undefined } }

const annotatedStatus = (errorClass: ApiErrorClass): number => {
  const status = errorClass.ast.annotations?.httpApiStatus
  return typeof status === "number" ? status : 500
}

/** The status an error answers with: its schema's `httpApiStatus` annotation. */
export const statusOf = (error: ApiError): number => annotatedStatus(error.constructor as ApiErrorClass)

// Errors every feature shares, and the answers given outside HttpApi.

/** The refusal of an API key outside the five merchant endpoints, by a route (403) or by the router (no such route). */
export const API_KEY_OUTSIDE_CHECKOUT = "API keys can access only the checkout invoice endpoints"

/**
 * The errors every feature shares, declared once with their status and message: request
 * validation, paging cursors, the Idempotency-Key header, rate limits. Features declare their own
 * in their errors module; endpoints list the statuses (above) they can answer.
 */
export const RequestErrors = {
  /** A request field that fails its schema (the message names the field; see ValidationErrors.ts). */
  invalidField: (message: string) => new BadRequest({ error: message }),
  invalidCursor: () => new BadRequest({ error: "cursor is invalid" }),
  invalidTiming: (problem: TimingOverrideProblem) => new BadRequest({ error: `paymentTiming.${problem.field} ${problem.constraint}` }),
  idempotencyKeyLength: () => new BadRequest({ error: "Idempotency-Key must be 1 to 255 characters" }),
  idempotencyKeyReused: () => new Conflict({ error: "Idempotency-Key was already used with a different request body" }),
  idempotencyKeyInProgress: () => new Conflict({ error: "A request with this Idempotency-Key is still in progress; retry shortly" }),
  rateLimited: (error: RateLimited) => new TooManyRequests({ error: `Rate limit exceeded. Retry after ${error.retryAfterSeconds} seconds.` }),
  apiKeyOutsideCheckout: () => new Forbidden({ error: API_KEY_OUTSIDE_CHECKOUT })
} as const

/**
 * The answers given outside HttpApi (src/Http.ts before a route or instead of one, and /metrics):
 * status and text, declared once here.
 */
export const TransportAnswers = {
  notFound: { status: 404, error: "Not found" },
  apiKeyOutsideCheckout: { status: 403, error: API_KEY_OUTSIDE_CHECKOUT },
  /** Input no route can take (the message from RequestLimits.ts names what is wrong). */
  hostileInput: (message: string) => ({ status: 400, error: message }),
  notJson: { status: 400, error: "Content-Type must be application/json" },
  unreadableBody: { status: 400, error: "Request body could not be read" },
  bodyTooLarge: (maxBodyBytes: number) => ({ status: 413, error: `Request body too large (at most ${maxBodyBytes} bytes)` }),
  databaseUnavailable: (retryAfterSeconds: number) => ({
    status: 503,
    error: `The service is temporarily unavailable (its database does not answer); retry after ${retryAfterSeconds} seconds`
  }),
  /** Past the request's time budget: the cause is not known (a stalled database, a slow upstream), so none is named. */
  timedOut: (retryAfterSeconds: number) => ({
    status: 503,
    error: `The service could not finish the request in time; retry after ${retryAfterSeconds} seconds`
  }),
  starting: { status: 503, error: "The service is starting; retry after 1 second" },
  metricsTokenInvalid: { status: 401, error: "Missing or invalid metrics token" },
  internal: { status: 500, error: "Internal server error" }
} as const

/** A transport answer as the spec's `{error}` response. */
export const transportResponse = ({ error, status }: { readonly status: number; readonly error: string }) => HttpServerResponse.jsonUnsafe({ error }, { status })

// The shared domain errors as HTTP errors.

/** The shared domain errors (src/domain/Errors.ts); a feature's own errors are mapped in its errors module. */
export type DomainError =
  | Errors.InvoiceNotFound
  | Errors.InvalidRequest
  | Errors.InvoiceTransitionRejected
  | Errors.CheckoutConfigurationNotFound
  | Errors.IncompatibleTiming
  | Errors.PaymentMethodUnavailable
  | Errors.PaymentBackendUnavailable
  | Errors.BitcoinAddressesPreparing
  | Errors.BillingBlocked
  | Errors.IdempotencyConflict
  | Errors.SolanaPaymentNotPayable
  | Errors.SolanaPreparationUnavailable

/** "awaiting_payment, partially_paid or expired", as the lifecycle machine says. */
const RECORDABLE = ((statuses) => `${statuses.slice(0, -1).join(", ")} or ${statuses.at(-1)}`)(statusesAccepting({ type: "RECORD_PAYMENT" }))

const transitionMessage = (error: Errors.InvoiceTransitionRejected): string => {
  if (error.detail !== undefined) return error.detail
  switch (error.operation) {
    case "void":
      return `Only an invoice awaiting payment can be voided; this invoice is ${error.status}`
    case "record-payment":
      return `A payment can be recorded only for an invoice that is ${RECORDABLE}; this invoice is ${error.status}`
    case "close-exception":
      return `This invoice has no open exception that this action can close`
  }
}

/**
 * The one place where the shared domain errors become HTTP statuses and `{error}` messages: they are
 * raised by several features (invoices, the payment page, refunds, the simulator), so their HTTP
 * form is declared here, once. A feature's own errors are declared in its errors module.
 */
export const toHttpError = (error: DomainError) => {
  switch (error._tag) {
    case "InvoiceNotFound":
      return new NotFound({ error: "Invoice not found" })
    case "InvalidRequest":
      return new BadRequest({ error: error.message })
    case "InvoiceTransitionRejected":
      return new Conflict({ error: transitionMessage(error) })
    case "CheckoutConfigurationNotFound":
      return new NotFound({ error: "Checkout settings are not configured yet: save them in the dashboard" })
    case "IncompatibleTiming":
      return new Conflict({ error: error.message })
    case "PaymentMethodUnavailable":
      return new Conflict({ error: error.message })
    case "PaymentBackendUnavailable":
      return new BadGateway({ error: error.message })
    case "BitcoinAddressesPreparing":
      return new ServiceUnavailable({
        error: "Bitcoin address preparation is in progress and no other payment method is available. Retry shortly with the same Idempotency-Key."
      })
    case "BillingBlocked":
      return new Forbidden({ error: "Invoice creation is blocked by the account's billing status" })
    case "IdempotencyConflict":
      return new Conflict({ error: error.message })
    case "SolanaPaymentNotPayable":
      return new Conflict({ error: error.message })
    case "SolanaPreparationUnavailable":
      return new ServiceUnavailable({ error: "Solana payment preparation is temporarily unavailable. Retry in a few seconds." })
  }
}

export const mapDomainErrors = <A, R>(effect: Effect.Effect<A, DomainError, R>) => Effect.mapError(effect, toHttpError)

// Rate limits.

/** Sets `Retry-After` on the response of a rate-limited request. */
const setRetryAfter = (error: RateLimited) =>
  HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(error.retryAfterSeconds))))

/** A limit check as the HTTP answer: over the limit, 429 with the retry time in the message and in `Retry-After`. */
export const orTooManyRequests = <A, E, R>(check: Effect.Effect<A, E, R>) =>
  check.pipe(
    Effect.catchIf(
      (error): error is Extract<E, RateLimited> => error instanceof RateLimited,
      (error) => setRetryAfter(error).pipe(Effect.andThen(Effect.fail(RequestErrors.rateLimited(error))))
    )
  )

/** The client address the per-address limits count by (behind CHECKOUT_TRUSTED_PROXIES, the one they forwarded). */
export const clientAddress = Effect.map(HttpServerRequest.HttpServerRequest, (request) => Option.getOrElse(request.remoteAddress, () => "unknown"))
