/** A request the service answered with an error status (the body's `error` is the service's message). */
export class CheckoutError extends Error {
  override readonly name = "CheckoutError"
  /** The HTTP status: 400, 401, 403, 404, 409, 413, 429, 502, 503 ... */
  readonly status: number
  /** The service's `error` message, word for word. */
  readonly error: string
  /** Seconds the service asked to wait (`Retry-After`), or null when it did not say. */
  readonly retryAfter: number | null

  constructor(status: number, error: string, retryAfter: number | null) {
    super(`${status}: ${error}`)
    this.status = status
    this.error = error
    this.retryAfter = retryAfter
  }
}

/** A webhook whose `X-Checkout-Signature` does not match its raw body under the signing secret. */
export class WebhookSignatureError extends Error {
  override readonly name = "WebhookSignatureError"
  constructor() {
    super("The webhook signature does not match the body: refuse it (answer 400) and do not act on it")
  }
}
