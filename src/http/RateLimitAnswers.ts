import { Effect, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { RateLimited } from "../domain/Errors.ts"
import { RequestErrors } from "./RequestErrors.ts"

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
