import { ByteSize, Duration, Effect } from "effect"
import { HttpIncomingMessage, HttpServerRequest, type HttpServerResponse } from "effect/http"
import { TransportAnswers, transportResponse } from "./ApiErrors.ts"

/**
 * Input that every route refuses before any schema sees it: request bodies nested deeper than a
 * fixed depth (validation recurses), NUL characters (PostgreSQL text cannot hold them) and unpaired
 * UTF-16 surrogates (not Unicode; they break encoders downstream). Pure functions; the HTTP edge
 * turns a returned message into a 400 `{error}`.
 */

export const MAX_JSON_DEPTH = 32

const NUL_MESSAGE = "must not contain a NUL character (\\u0000)"
const SURROGATE_MESSAGE = "must be valid Unicode text (it contains an unpaired surrogate)"

/** Deepest `{`/`[` nesting of a JSON text, counted outside strings, stopping once past `limit`. */
export const nestingExceeds = (text: string, limit: number): boolean => {
  let depth = 0
  let inString = false
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i)
    if (inString) {
      if (c === 92) i++ // backslash: skip the escaped character
      else if (c === 34) inString = false
    } else if (c === 34) inString = true
    else if (c === 123 || c === 91) {
      if (++depth > limit) return true
    } else if (c === 125 || c === 93) depth--
  }
  return false
}

const textProblem = (value: string): string | undefined => value.includes("\u0000") ? NUL_MESSAGE : value.isWellFormed() ? undefined : SURROGATE_MESSAGE

const join = (path: string, key: string) => (path === "" ? key : `${path}.${key}`)

/** The first string (key or value) of a parsed JSON value that holds a NUL or an unpaired surrogate. */
export const jsonValueProblem = (value: unknown, path = ""): string | undefined => {
  if (typeof value === "string") {
    const problem = textProblem(value)
    return problem === undefined ? undefined : `${path === "" ? "Request body" : path} ${problem}`
  }
  if (Array.isArray(value)) {
    for (let i = 0; i < value.length; i++) {
      const problem = jsonValueProblem(value[i], `${path === "" ? "Request body" : path}[${i}]`)
      if (problem !== undefined) return problem
    }
    return undefined
  }
  if (value !== null && typeof value === "object") {
    for (const [key, inner] of Object.entries(value)) {
      const keyProblem = textProblem(key)
      if (keyProblem !== undefined) return `${path === "" ? "A field name" : `A field name in ${path}`} ${keyProblem}`
      const problem = jsonValueProblem(inner, join(path, key))
      if (problem !== undefined) return problem
    }
  }
  return undefined
}

/**
 * The reason a JSON request body is refused, or undefined. Only texts that can carry a NUL or a
 * surrogate (a `\u` escape or a raw NUL) are parsed here; the rest cost one scan.
 */
export const jsonBodyProblem = (text: string): string | undefined => {
  if (nestingExceeds(text, MAX_JSON_DEPTH)) return `Request body is nested too deeply (at most ${MAX_JSON_DEPTH} levels)`
  if (!text.includes("\\u") && !text.includes("\u0000")) return undefined
  if (text.includes("\u0000")) return `Request body ${NUL_MESSAGE}`
  let parsed: unknown
  try {
    parsed = JSON.parse(text)
  } catch {
    return undefined // the route's own parser answers "must be valid JSON"
  }
  return jsonValueProblem(parsed)
}

const strictUtf8 = new TextDecoder("utf-8", { fatal: true })

export const INVALID_UTF8_MESSAGE = "Request body must be valid UTF-8"

/**
 * The reason a JSON request body, as received, is refused, or undefined. The platform decodes
 * bodies leniently (an invalid byte becomes U+FFFD and would be stored so); here it must decode.
 */
export const jsonBodyBytesProblem = (bytes: Uint8Array): string | undefined => {
  let text: string
  try {
    text = strictUtf8.decode(bytes)
  } catch {
    return INVALID_UTF8_MESSAGE
  }
  return jsonBodyProblem(text)
}

/** Longest path segment (an id, once decoded) a request may carry; the router matches no longer parameter. */
export const MAX_PATH_SEGMENT = 100

/**
 * Why a request path is refused before routing, or undefined: a segment whose percent-encoding is
 * not valid UTF-8 (`%E0%A4%A`, `%ZZ`), or one longer than MAX_PATH_SEGMENT characters once decoded.
 * The router would otherwise find no route and answer 404 (403 for an API key).
 */
export const pathProblem = (url: string): string | undefined => {
  const end = url.search(/[?#]/)
  const path = end === -1 ? url : url.slice(0, end)
  if (path.length <= MAX_PATH_SEGMENT && !path.includes("%")) return undefined
  for (const segment of path.split("/")) {
    let decoded: string
    try {
      decoded = decodeURIComponent(segment)
    } catch {
      return "Request path must be valid percent-encoded UTF-8"
    }
    if (decoded.length > MAX_PATH_SEGMENT) return `Request path segments (ids) must be at most ${MAX_PATH_SEGMENT} characters`
  }
  return undefined
}

/**
 * The first query field or path segment that holds a NUL (percent-decoding cannot yield a lone
 * surrogate), then any other problem of the path (pathProblem).
 */
export const urlProblem = (url: string): string | undefined => {
  if (!url.includes("%00") && !url.includes("\u0000")) return pathProblem(url)
  const parsed = new URL(url, "http://localhost")
  for (const [key, value] of parsed.searchParams) {
    if (key.includes("\u0000")) return `A query field name ${NUL_MESSAGE}`
    if (value.includes("\u0000")) return `Query field ${key} ${NUL_MESSAGE}`
  }
  return parsed.pathname.includes("%00") ? `Request path ${NUL_MESSAGE}` : pathProblem(url)
}

/** A `charset` other than UTF-8 on a request body (the service reads every body as UTF-8). */
export const charsetProblem = (contentType: string | undefined): string | undefined => {
  if (contentType === undefined) return undefined
  const match = /;\s*charset\s*=\s*"?([^";\s]+)"?/i.exec(contentType)
  if (match === null) return undefined
  const charset = match[1].toLowerCase()
  return charset === "utf-8" || charset === "utf8" ? undefined : `Content-Type charset must be utf-8 (got ${match[1]})`
}

const BODY_METHODS = new Set(["POST", "PUT", "PATCH", "DELETE"])

/**
 * Refuses, before any route decodes it, input no route can take (above). The body
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
