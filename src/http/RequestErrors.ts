import { HttpServerResponse } from "effect/http"
import type { RateLimited } from "../domain/Errors.ts"
import type { TimingOverrideProblem } from "../domain/TimingOverride.ts"
import { BadRequest, Conflict, Forbidden, TooManyRequests } from "./ApiErrors.ts"

/** The refusal of an API key outside the five merchant endpoints, by a route (403) or by the router (no such route). */
export const API_KEY_OUTSIDE_CHECKOUT = "API keys can access only the checkout invoice endpoints"

/**
 * The errors every feature shares, declared once with their status and message: request
 * validation, paging cursors, the Idempotency-Key header, rate limits. Features declare their own
 * in their errors module; endpoints list the statuses (ApiErrors.ts) they can answer.
 */
export const RequestErrors = {
  /** A request field that fails its schema (the message names the field; see ValidationMessage.ts). */
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
  /** Input no route can take (the message from HostileInput.ts names what is wrong). */
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
