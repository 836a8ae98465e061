import { Context, Duration, Effect, Layer } from "effect"
import { FetchHttpClient, HttpClient, type HttpClientError, HttpClientRequest, type HttpClientResponse } from "effect/http"
import { HttpApiClient } from "effect/http-api"
import { MerchantApi } from "../../contract/MerchantApi.ts"

/**
 * The merchant API as an Effect client, made by `HttpApiClient` from the contract's `HttpApi`
 * definition of the five invoice endpoints (the one the service serves): requests are encoded and
 * answers decoded by the API's own schemas, and each declared error fails with its tagged class (`BadRequest`,
 * `Unauthorized`, `Forbidden`, `NotFound`, `Conflict`, `TooManyRequests`, `BadGateway`,
 * `ServiceUnavailable`, each with the service's `error` message).
 */
export { MerchantApi }

export interface CheckoutClientOptions {
  /** The service's address, e.g. `https://checkout.example.com`. */
  readonly baseUrl: string
  /** A checkout API key (`svc_live_...`, or `svc_test_...` for test mode). Server-side only. */
  readonly apiKey: string
  /** Retries of a 429, 502, 503 or idempotency key in progress on a request that is safe to repeat (default 2; 0 inside request and webhook handlers). */
  readonly maxRetries?: number
  /** The most a call waits between attempts, all waits together (default 10 000 ms); a longer `Retry-After` answers at once. */
  readonly retryBudgetMs?: number
}

export interface IdempotencyOptions {
  /** 1-255 characters: the same key and body replay the first outcome for 24 hours; only keyed writes are retried. */
  readonly idempotencyKey?: string
}

const DEFAULT_RETRY_WAIT_SECONDS = 1
const KEY_IN_PROGRESS = "A request with this Idempotency-Key is still in progress"

/** `Retry-After` in seconds (delta-seconds or an HTTP date); null when absent or unreadable. */
const retryAfterOf = (response: HttpClientResponse.HttpClientResponse, now: number): number | null => {
  const header = response.headers["retry-after"]?.trim()
  if (header === undefined || header === "") return null
  if (/^\d+$/.test(header)) return Number(header)
  const at = Date.parse(header)
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000))
}

/** Whether repeating the request cannot do a thing twice: reads, and writes with an idempotency key. */
const isRepeatable = (request: HttpClientRequest.HttpClientRequest) => request.method === "GET" || request.headers["idempotency-key"] !== undefined

/** Whether the same request may succeed later: busy or unavailable, or its key's first request still running (the body is read once and kept). */
const isTransient = (answer: HttpClientResponse.HttpClientResponse) =>
  answer.status === 429 || answer.status === 502 || answer.status === 503
    ? Effect.succeed(true)
    : answer.status === 409
    ? answer.text.pipe(Effect.map((text) => text.includes(KEY_IN_PROGRESS)), Effect.orElseSucceed(() => false))
    : Effect.succeed(false)

/** Transient answers to repeatable requests are retried after `Retry-After`, up to `maxRetries` times, while the waits fit the budget. */
const retryWhenBusy = (maxRetries: number, retryBudgetMs: number) =>
  HttpClient.transform((response: Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError>, request) => {
    if (!isRepeatable(request)) return response
    const attempt = (retries: number, budgetMs: number): Effect.Effect<HttpClientResponse.HttpClientResponse, HttpClientError.HttpClientError> =>
      Effect.flatMap(response, (answer) =>
        Effect.flatMap(isTransient(answer), (transient) => {
          const waitMs = (retryAfterOf(answer, Date.now()) ?? DEFAULT_RETRY_WAIT_SECONDS) * 1000
          if (!transient || retries >= maxRetries || waitMs > budgetMs) return Effect.succeed(answer)
          return Effect.sleep(Duration.millis(waitMs)).pipe(Effect.andThen(attempt(retries + 1, budgetMs - waitMs)))
        }))
    return attempt(0, retryBudgetMs)
  })

const keyHeaders = (idempotencyKey: string | undefined) => idempotencyKey === undefined ? {} : { "idempotency-key": idempotencyKey }

/** The client: the same five calls as the promise client, as effects that need an `HttpClient`. */
export const makeCheckoutClient = (options: CheckoutClientOptions) => {
  if (typeof options?.apiKey !== "string" || options.apiKey.trim() === "") {
    throw new TypeError("makeCheckoutClient: apiKey is missing: pass a checkout API key (svc_live_…) from the dashboard's API keys page")
  }
  return Effect.map(
    HttpApiClient.make(MerchantApi, {
      baseUrl: options.baseUrl.replace(/\/+$/, ""),
      transformClient: (client) =>
        client.pipe(HttpClient.mapRequest(HttpClientRequest.setHeader("x-api-key", options.apiKey)), retryWhenBusy(options.maxRetries ?? 2, options.retryBudgetMs ?? 10_000))
    }),
    ({ merchant, testHelpers }) => ({
      invoices: {
        create: (body: Parameters<typeof merchant.create>[0]["payload"], { idempotencyKey }: IdempotencyOptions = {}) =>
          merchant.create({ payload: body, headers: keyHeaders(idempotencyKey) }),
        retrieve: (id: string) => merchant.detail({ params: { id } }),
        status: (id: string) => merchant.status({ params: { id } }),
        void: (id: string, { idempotencyKey }: IdempotencyOptions = {}) => merchant.void({ params: { id }, payload: {}, headers: keyHeaders(idempotencyKey) }),
        recordPayment: (id: string, body: Parameters<typeof merchant.recordPayment>[0]["payload"], { idempotencyKey }: IdempotencyOptions = {}) =>
          merchant.recordPayment({ params: { id }, payload: body, headers: keyHeaders(idempotencyKey) })
      },
      /** Test helpers: with a test key (`svc_test_…`) only, on its test invoices; a live key fails with Forbidden. */
      testHelpers: {
        invoices: {
          pay: (id: string, body: Parameters<typeof testHelpers.pay>[0]["payload"]) => testHelpers.pay({ params: { id }, payload: body }),
          confirm: (id: string, body: Parameters<typeof testHelpers.confirm>[0]["payload"]) => testHelpers.confirm({ params: { id }, payload: body }),
          reorg: (id: string, body: Parameters<typeof testHelpers.reorg>[0]["payload"]) => testHelpers.reorg({ params: { id }, payload: body }),
          expire: (id: string) => testHelpers.expire({ params: { id }, payload: {} })
        }
      }
    })
  )
}

/** The client's shape: `invoices.create`, `retrieve`, `status`, `void`, `recordPayment`, and `testHelpers.invoices.pay`, `confirm`, `reorg`, `expire`. */
export type CheckoutClientShape = Effect.Success<ReturnType<typeof makeCheckoutClient>>

/** The client as a service, for programs that take it from their context. */
export class CheckoutClient extends Context.Service<CheckoutClient, CheckoutClientShape>()("@checkout-invoicing/sdk/CheckoutClient") {
  /** The client over the platform's fetch. */
  static readonly layer = (options: CheckoutClientOptions) => Layer.effect(CheckoutClient, makeCheckoutClient(options)).pipe(Layer.provide(FetchHttpClient.layer))
}

export { BadGateway, BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests, Unauthorized } from "../../contract/ApiErrors.ts"
