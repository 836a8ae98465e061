import { CheckoutError } from "./errors.ts"

/** How one client sends requests: resolved from `CheckoutClientOptions`. */
export interface Transport {
  readonly baseUrl: string
  readonly apiKey: string
  readonly fetch: typeof globalThis.fetch
  readonly maxRetries: number
  readonly timeoutMs: number
  readonly retryBudgetMs: number
}

export interface Call {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body?: unknown
  readonly idempotencyKey?: string | undefined
  /** Whether repeating the request cannot do a thing twice: reads, and writes with an idempotency key. */
  readonly repeatable: boolean
}

/** The wait when an answer worth retrying does not say how long (`Retry-After` missing). */
const DEFAULT_RETRY_WAIT_SECONDS = 1
/** The service's answer while the first request with the same idempotency key is still running. */
const KEY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress"

/** `Retry-After` in seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export const parseRetryAfter = (header: string | null, now = Date.now()): number | null => {
  if (header === null || header.trim() === "") return null
  if (/^\d+$/.test(header.trim())) return Number(header.trim())
  const at = Date.parse(header)
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000))
}

/** Whether the same request may succeed later: busy or unavailable, or its key's first request still running. */
const isTransient = (status: number, message: string) => status === 429 || status === 502 || status === 503 || (status === 409 && message.startsWith(KEY_IN_PROGRESS))

const messageOf = (status: number, text: string): string => {
  try {
    const body = JSON.parse(text) as { error?: unknown }
    if (typeof body?.error === "string") return body.error
  } catch {
    // not JSON (a proxy's page): the text is the message
  }
  return text === "" ? `HTTP ${status}` : text.slice(0, 500)
}

const answerError = async (response: Response, call: Call): Promise<CheckoutError> => {
  const error = messageOf(response.status, await response.text())
  return new CheckoutError({
    status: response.status,
    error,
    requestId: response.headers.get("x-request-id"),
    retryAfter: parseRetryAfter(response.headers.get("retry-after")),
    retryable: call.repeatable && isTransient(response.status, error)
  })
}

const noAnswerError = (cause: unknown, call: Call, timedOut: boolean, timeoutMs: number): CheckoutError =>
  new CheckoutError({
    status: null,
    error: timedOut ? `No answer within timeoutMs (${timeoutMs} ms)` : `The request failed before an answer: ${cause instanceof Error ? cause.message : String(cause)}`,
    requestId: null,
    retryAfter: null,
    retryable: call.repeatable,
    cause
  })

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/** One attempt: the answer's JSON, or the CheckoutError it makes. */
const attempt = async <A>(transport: Transport, call: Call, signal: AbortSignal): Promise<A | CheckoutError> => {
  const headers: Record<string, string> = { "x-api-key": transport.apiKey, accept: "application/json" }
  if (call.body !== undefined) headers["content-type"] = "application/json"
  if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey
  try {
    const response = await transport.fetch(`${transport.baseUrl}${call.path}`, {
      method: call.method,
      headers,
      body: call.body === undefined ? undefined : JSON.stringify(call.body),
      signal
    })
    return response.ok ? (await response.json()) as A : await answerError(response, call)
  } catch (cause) {
    return noAnswerError(cause, call, signal.aborted, transport.timeoutMs)
  }
}

/**
 * Sends a call, retrying what is worth retrying while it is safe (`call.repeatable`), up to
 * `maxRetries` times, after `Retry-After` (1 s when absent) as long as the waits fit the retry
 * budget and the call's deadline; otherwise rejects with the last error.
 */
export const send = async <A>(transport: Transport, call: Call): Promise<A> => {
  const deadline = Date.now() + transport.timeoutMs
  const signal = AbortSignal.timeout(transport.timeoutMs)
  let budgetMs = transport.retryBudgetMs
  for (let retries = 0;; retries++) {
    const outcome = await attempt<A>(transport, call, signal)
    if (!(outcome instanceof CheckoutError)) return outcome
    const waitMs = (outcome.retryAfter ?? DEFAULT_RETRY_WAIT_SECONDS) * 1000
    const fits = waitMs <= budgetMs && Date.now() + waitMs < deadline
    if (!outcome.retryable || retries >= transport.maxRetries || !fits) throw outcome
    budgetMs -= waitMs
    await sleep(waitMs)
  }
}
