/** What a `CheckoutError` is made of. */
export interface CheckoutErrorDetails {
  /** The HTTP status, or null when no answer came (the network failed, or `timeoutMs` ran out). */
  readonly status: number | null
  /** The service's `error` message, word for word (or what went wrong when no answer came). */
  readonly error: string
  /** The answer's request id (`X-Request-Id`), to quote to support; null when the answer has none. */
  readonly requestId: string | null
  /** Seconds the service asked to wait (`Retry-After`), or null when it did not say. */
  readonly retryAfter: number | null
  /** Whether sending the same request again is safe and may succeed (see `retryable` below). */
  readonly retryable: boolean
  /** The network error or time-out behind a call that got no answer. */
  readonly cause?: unknown
}

const adviceOf = ({ status, retryAfter, retryable }: CheckoutErrorDetails): string => {
  if (retryable) return retryAfter === null ? "safe to retry" : `safe to retry after ${retryAfter} s`
  if (status === null || status === 429 || status === 503) {
    return "not retried: without an idempotency key this write could run twice (send one to retry safely)"
  }
  return "retrying the same request will not help"
}

/**
 * A call that did not succeed: the service answered with an error status, or no answer came. Its
 * message says what happened and whether to retry, e.g. `429 Rate limit exceeded. Retry after 30
 * seconds. (request 3f9c…; safe to retry after 30 s)`.
 */
export class CheckoutError extends Error {
  override readonly name = "CheckoutError"
  /** The HTTP status: 400, 401, 403, 404, 409, 413, 429, 502, 503 …; null when no answer came. */
  readonly status: number | null
  /** The service's `error` message, word for word (e.g. `amountUsd must be at least 0.01`). */
  readonly error: string
  /** The answer's request id, to quote to support; null when there is none. */
  readonly requestId: string | null
  /** Seconds the service asked to wait (`Retry-After`), or null when it did not say. */
  readonly retryAfter: number | null
  /**
   * Whether sending the same request again is safe and may succeed: a 429, a 502, a 503, an
   * idempotency key still in progress, a network failure or a time-out, on a read or on a write
   * that carries an idempotency key. False for an error that will answer the same again (400,
   * 401, 403, 404, other 409s) and for a write without a key (it could run twice).
   */
  readonly retryable: boolean

  constructor(details: CheckoutErrorDetails) {
    const request = details.requestId === null ? "" : `request ${details.requestId}; `
    super(`${details.status ?? "No answer"}: ${details.error} (${request}${adviceOf(details)})`, { cause: details.cause })
    this.status = details.status
    this.error = details.error
    this.requestId = details.requestId
    this.retryAfter = details.retryAfter
    this.retryable = details.retryable
  }
}

/** A webhook whose `X-Checkout-Signature` does not match its raw body under the signing secret. */
export class WebhookSignatureError extends Error {
  override readonly name = "WebhookSignatureError"
  constructor() {
    super("The webhook signature does not match the body: refuse it (answer 400) and do not act on it")
  }
}
