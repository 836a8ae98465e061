import { ByteSize, Duration, Effect } from "effect"
import { HttpIncomingMessage, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { charsetProblem, jsonBodyBytesProblem, urlProblem } from "./HostileInput.ts"
import { TransportAnswers, transportResponse } from "./RequestErrors.ts"

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Refuses, before any route decodes it, input no route can take (see HostileInput.ts). The body
 * read here is the one the route reads afterwards (the platform caches it), under the same cap.
 */
const refuseHostileInput = <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
  Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
    const inUrl = urlProblem(request.url)
    if (inUrl !== undefined) return Effect.succeed(transportResponse(TransportAnswers.hostileInput(inUrl)))
    if (!BODY_METHODS.has(request.method)) return httpEffect
    const contentType = request.headers["content-type"]
    const inCharset = charsetProblem(contentType)
    if (inCharset !== undefined) return Effect.succeed(transportResponse(TransportAnswers.hostileInput(inCharset)))
    if (contentType !== undefined && !contentType.toLowerCase().includes("json")) return httpEffect
    // The bytes, not `text`: that decodes leniently. The route's own read decodes the same cached bytes.
    return Effect.flatMap(request.arrayBuffer, (bytes) => {
      const inBody = jsonBodyBytesProblem(new Uint8Array(bytes))
      return inBody === undefined ? httpEffect : Effect.succeed(transportResponse(TransportAnswers.hostileInput(inBody)))
    })
  })

export interface RequestLimitSettings {
  readonly maxBodyBytes: number
  readonly requestTimeoutMs: number
  /** The answer past the time budget. */
  readonly timedOut: Effect.Effect<HttpServerResponse.HttpServerResponse>
}

/**
 * What every request is held to (issue #54 item 3: one middleware of its own): no hostile input
 * (URL, charset, JSON bytes), a body of at most CHECKOUT_MAX_BODY_BYTES (a larger one fails the
 * route's read: 413 from the error answers), and an answer within CHECKOUT_REQUEST_TIMEOUT_MS (a
 * stalled database, most likely, gets a fast 503 instead).
 */
export const requestLimits =
  ({ maxBodyBytes, requestTimeoutMs, timedOut }: RequestLimitSettings) => <E, R>(httpEffect: Effect.Effect<HttpServerResponse.HttpServerResponse, E, R>) =>
    refuseHostileInput(httpEffect).pipe(
      Effect.provideService(HttpIncomingMessage.MaxBodySize, ByteSize.bytes(maxBodyBytes)),
      Effect.timeoutOrElse({ duration: Duration.millis(requestTimeoutMs), orElse: () => timedOut })
    )
