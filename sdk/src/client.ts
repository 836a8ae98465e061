import { send, type Transport } from "./request.ts"
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
/** The body of `testHelpers.invoices.pay`. */
export type TestPayBody = JsonBody<paths["/api/checkout/test-helpers/invoices/{id}/pay"]["post"]["requestBody"]>
/** The body of `testHelpers.invoices.confirm`. */
export type TestConfirmBody = JsonBody<paths["/api/checkout/test-helpers/invoices/{id}/confirm"]["post"]["requestBody"]>
/** The body of `testHelpers.invoices.reorg`. */
export type TestReorgBody = JsonBody<paths["/api/checkout/test-helpers/invoices/{id}/reorg"]["post"]["requestBody"]>
/** What `pay`, `confirm` and `reorg` answer: the payment fed and the invoice afterwards. */
export type TestHelperResult = components["schemas"]["TestHelperResult"]

/** The platform's fetch (typed by the DOM lib or @types/node; `never` where neither is loaded). */
type Fetch = typeof globalThis extends { readonly fetch: infer F } ? F : never

export interface CheckoutClientOptions {
  /** The service's address, e.g. `https://checkout.example.com` (no trailing path). */
  readonly baseUrl: string
  /** A checkout API key (`svc_live_...`, or `svc_test_...` for test mode), created in the dashboard. Server-side only. */
  readonly apiKey: string
  /** The fetch to use (default: the global one). */
  readonly fetch?: Fetch
  /**
   * Retries of an answer worth retrying (429, 502, 503, an idempotency key still in progress, a
   * network failure) on a request that is safe to repeat (default 2). Inside a request or webhook
   * handler pass 0: answer your caller at once and let them (or your job queue) retry.
   */
  readonly maxRetries?: number
  /** The longest one call may take, all its attempts and waits included (default 30 000 ms); then it rejects with `status: null`. */
  readonly timeoutMs?: number
  /**
   * The most a call waits between attempts, all waits together (default 10 000 ms): a `Retry-After`
   * that does not fit is not waited out, the call rejects at once with `retryAfter` set.
   */
  readonly retryBudgetMs?: number
}

export interface IdempotencyOptions {
  /**
   * 1-255 characters, e.g. your order id: the same key and body replay the first outcome for 24
   * hours, so a create retried after a time-out or a 503 never makes a second invoice. Only a
   * write with a key is retried.
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
  /** Test helpers: with a test key (`svc_test_…`) only, on its test invoices; a live key gets 403. */
  readonly testHelpers: {
    readonly invoices: {
      readonly pay: (id: string, body: TestPayBody) => Promise<TestHelperResult>
      readonly confirm: (id: string, body: TestConfirmBody) => Promise<TestHelperResult>
      readonly reorg: (id: string, body: TestReorgBody) => Promise<TestHelperResult>
      readonly expire: (id: string) => Promise<Invoice>
    }
  }
}

const DEFAULTS = { maxRetries: 2, timeoutMs: 30_000, retryBudgetMs: 10_000 }

/** What is wrong with the options, in words a developer acts on; undefined when they are usable. */
const problemOf = (options: CheckoutClientOptions | undefined): string | undefined => {
  if (typeof options !== "object" || options === null) return "pass { baseUrl, apiKey }"
  if (typeof options.apiKey !== "string" || options.apiKey.trim() === "") {
    return `apiKey is missing (got ${
      JSON.stringify(options.apiKey) ?? "undefined"
    }): pass a checkout API key (svc_live_…) from the dashboard's API keys page, e.g. process.env.CHECKOUT_API_KEY`
  }
  if (typeof options.baseUrl !== "string" || !/^https?:\/\/[^/]/.test(options.baseUrl)) {
    return `baseUrl must be the service's http(s) address, e.g. https://checkout.example.com (got ${JSON.stringify(options.baseUrl) ?? "undefined"})`
  }
  const fetchImpl = options.fetch ?? globalThis.fetch
  if (typeof fetchImpl !== "function") return "no fetch: this runtime has no global fetch (Node 18 or later has one); pass options.fetch"
  for (const [name, least] of [["maxRetries", 0], ["retryBudgetMs", 0], ["timeoutMs", 1]] as const) {
    const value = options[name]
    if (value !== undefined && !(Number.isFinite(value) && value >= least)) return `${name} must be a number of at least ${least} (got ${String(value)})`
  }
  return undefined
}

/**
 * A client of the merchant API: the five invoice calls and the test helpers, authenticated by the API key. Throws a
 * TypeError at once when an option is missing or unusable (an empty key would only be refused
 * with `401 Invalid API key` on the first call).
 */
export const createCheckoutClient = (options: CheckoutClientOptions): CheckoutClient => {
  const problem = problemOf(options)
  if (problem !== undefined) throw new TypeError(`createCheckoutClient: ${problem}`)
  const transport: Transport = {
    baseUrl: options.baseUrl.replace(/\/+$/, ""),
    apiKey: options.apiKey,
    fetch: options.fetch ?? globalThis.fetch.bind(globalThis),
    maxRetries: options.maxRetries ?? DEFAULTS.maxRetries,
    timeoutMs: options.timeoutMs ?? DEFAULTS.timeoutMs,
    retryBudgetMs: options.retryBudgetMs ?? DEFAULTS.retryBudgetMs
  }
  const invoicePath = (id: string, suffix = "") => `/api/checkout/invoices/${encodeURIComponent(id)}${suffix}`
  const helperPath = (id: string, action: string) => `/api/checkout/test-helpers/invoices/${encodeURIComponent(id)}/${action}`
  const write = <A>(path: string, body: unknown, idempotencyKey: string | undefined) =>
    send<A>(transport, { method: "POST", path, body, idempotencyKey, repeatable: idempotencyKey !== undefined })
  const read = <A>(path: string) => send<A>(transport, { method: "GET", path, repeatable: true })

  return {
    invoices: {
      create: (body, { idempotencyKey } = {}) => write<Invoice>("/api/checkout/invoices", body, idempotencyKey),
      retrieve: (id) => read<Invoice>(invoicePath(id)),
      status: (id) => read<InvoiceStatus>(invoicePath(id, "/status")),
      void: (id, { idempotencyKey } = {}) => write<Invoice>(invoicePath(id, "/void"), {}, idempotencyKey),
      recordPayment: (id, body, { idempotencyKey } = {}) => write<Invoice>(invoicePath(id, "/record-payment"), body, idempotencyKey)
    },
    testHelpers: {
      invoices: {
        pay: (id, body) => write<TestHelperResult>(helperPath(id, "pay"), body, undefined),
        confirm: (id, body) => write<TestHelperResult>(helperPath(id, "confirm"), body, undefined),
        reorg: (id, body) => write<TestHelperResult>(helperPath(id, "reorg"), body, undefined),
        expire: (id) => write<Invoice>(helperPath(id, "expire"), {}, undefined)
      }
    }
  }
}
