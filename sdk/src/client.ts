import { CheckoutError } from "./errors.ts"
import type { components, paths } from "./types.ts"

type JsonBody<T> = T extends { content: { "application/json": infer Body } } ? Body : never

/** The body of `invoices.create` (POST /api/checkout/invoices). */
export type CreateInvoiceBody = JsonBody<paths["/api/checkout/invoices"]["post"]["requestBody"]>
/** The merchant's Invoice: what create, retrieve, void and recordPayment answer. */
export type Invoice = components["schemas"]["Invoice"]
/** The cheap polling read (`invoices.status`). */
export type InvoiceStatus = components["schemas"]["InvoiceStatus"]
/** The body of `invoices.recordPayment`. */
export type RecordPaymentBody = JsonBody<paths["/api/checkout/invoices/{id}/record-payment"]["post"]["requestBody"]>

export interface CheckoutClientOptions {
  /** The service's address, e.g. `https://checkout.example.com` (no trailing path). */
  readonly baseUrl: string
  /** A checkout API key (`svc_live_...`), created in the dashboard. Server-side only. */
  readonly apiKey: string
  /** The fetch to use (default: the global one). */
  readonly fetch?: typeof globalThis.fetch
  /** Retries of a 429 or 503 answer on a request that is safe to repeat (default 2). */
  readonly maxRetries?: number
}

export interface IdempotencyOptions {
  /**
   * 1-255 characters, e.g. your order id: the same key and body replay the first outcome for 24
   * hours, so a create retried after a time-out or a 503 never makes a second invoice. Only a
   * request with a key is retried.
   */
  readonly idempotencyKey?: string
}

export interface CheckoutClient {
  readonly invoices: {
    readonly create: (body: CreateInvoiceBody, options?: IdempotencyOptions) => Promise<Invoice>
    readonly retrieve: (id: string) => Promise<Invoice>
    readonly status: (id: string) => Promise<InvoiceStatus>
    readonly void: (id: string, options?: IdempotencyOptions) => Promise<Invoice>
    readonly recordPayment: (id: string, body: RecordPaymentBody, options?: IdempotencyOptions) => Promise<Invoice>
  }
}

/** The longest `Retry-After` a call waits out by itself; a longer one rejects at once with `retryAfter` set. */
const MAX_RETRY_WAIT_SECONDS = 60
/** The wait when a 429 or 503 does not say how long (`Retry-After` missing). */
const DEFAULT_RETRY_WAIT_SECONDS = 1

/** `Retry-After` in seconds: delta-seconds or an HTTP date; null when absent or unreadable. */
export const parseRetryAfter = (header: string | null, now = Date.now()): number | null => {
  if (header === null || header.trim() === "") return null
  if (/^\d+$/.test(header.trim())) return Number(header.trim())
  const at = Date.parse(header)
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000))
}

const errorOf = async (response: Response): Promise<CheckoutError> => {
  const text = await response.text()
  let message = text === "" ? `HTTP ${response.status}` : text
  try {
    const body = JSON.parse(text) as { error?: unknown }
    if (typeof body?.error === "string") message = body.error
  } catch {
    // not JSON (a proxy's page): the text is the message
  }
  return new CheckoutError(response.status, message, parseRetryAfter(response.headers.get("retry-after")))
}

const RETRIED = new Set([429, 503])
const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000))

interface Call {
  readonly method: "GET" | "POST"
  readonly path: string
  readonly body?: unknown
  readonly idempotencyKey?: string | undefined
  /** Whether repeating the request cannot do a thing twice: reads, and writes with an idempotency key. */
  readonly retryable: boolean
}

/** A client of the merchant API: the five invoice calls, authenticated by the API key. */
export const createCheckoutClient = (options: CheckoutClientOptions): CheckoutClient => {
  const baseUrl = options.baseUrl.replace(/\/+$/, "")
  const fetchImpl = options.fetch ?? globalThis.fetch
  const maxRetries = options.maxRetries ?? 2

  const request = async <A>(call: Call): Promise<A> => {
    const headers: Record<string, string> = { "x-api-key": options.apiKey, accept: "application/json" }
    if (call.body !== undefined) headers["content-type"] = "application/json"
    if (call.idempotencyKey !== undefined) headers["idempotency-key"] = call.idempotencyKey
    for (let attempt = 0;; attempt++) {
      const response = await fetchImpl(`${baseUrl}${call.path}`, {
        method: call.method,
        headers,
        body: call.body === undefined ? undefined : JSON.stringify(call.body)
      })
      if (response.ok) return (await response.json()) as A
      const error = await errorOf(response)
      const wait = error.retryAfter ?? DEFAULT_RETRY_WAIT_SECONDS
      if (!call.retryable || !RETRIED.has(error.status) || attempt >= maxRetries || wait > MAX_RETRY_WAIT_SECONDS) throw error
      await sleep(wait)
    }
  }

  const invoicePath = (id: string, suffix = "") => `/api/checkout/invoices/${encodeURIComponent(id)}${suffix}`

  return {
    invoices: {
      create: (body, { idempotencyKey } = {}) =>
        request<Invoice>({ method: "POST", path: "/api/checkout/invoices", body, idempotencyKey, retryable: idempotencyKey !== undefined }),
      retrieve: (id) => request<Invoice>({ method: "GET", path: invoicePath(id), retryable: true }),
      status: (id) => request<InvoiceStatus>({ method: "GET", path: invoicePath(id, "/status"), retryable: true }),
      void: (id, { idempotencyKey } = {}) =>
        request<Invoice>({ method: "POST", path: invoicePath(id, "/void"), body: {}, idempotencyKey, retryable: idempotencyKey !== undefined }),
      recordPayment: (id, body, { idempotencyKey } = {}) =>
        request<Invoice>({ method: "POST", path: invoicePath(id, "/record-payment"), body, idempotencyKey, retryable: idempotencyKey !== undefined })
    }
  }
}
