import { Effect, Result, Schema } from "effect"
import { createServer, type IncomingMessage, type ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type CheckoutClient, CheckoutError, createCheckoutClient, parseWebhookEvent, type WebhookEvent } from "../../sdk/src/index.ts"
import {
  BadGateway,
  BadRequest,
  CheckoutClient as EffectCheckoutClient,
  Conflict,
  Forbidden,
  NotFound,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized
} from "../../sdk/src/effect.ts"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { invoiceEventBody, TestEventBody } from "../../src/webhooks/WebhookPayloads.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

// The SDK against the whole service (its background dispatcher included, so on a database of its
// own) on the embedded database; a low API rate limit so that a 429 is cheap to provoke.
const RATE_LIMIT = 20
let database: Awaited<ReturnType<typeof privateDatabase>>
let app: TestApp
let receiver: WebhookReceiver

beforeAll(async () => {
  database = await privateDatabase()
  app = await startTestApp({ role: "all", webhookAllowLoopback: true, databaseUrl: database.url, apiRateLimitPerMinute: RATE_LIMIT })
  receiver = await startWebhookReceiver()
})

afterAll(async () => {
  await receiver?.close()
  await app?.close()
  await database?.drop()
})

const clientOf = (merchant: TestMerchant, options: { readonly maxRetries?: number } = {}): CheckoutClient =>
  createCheckoutClient({ baseUrl: app.baseUrl, apiKey: merchant.apiKey, ...options })

/** The CheckoutError a call rejects with (fails the test when it resolves or throws something else). */
const rejection = async (call: Promise<unknown>): Promise<CheckoutError> => {
  const error = await call.then(() => undefined, (error: unknown) => error)
  expect(error).toBeInstanceOf(CheckoutError)
  return error as CheckoutError
}

describe("the SDK's client against the running service", () => {
  it("creates, retrieves, polls, voids and records payments with typed results", async () => {
    const client = clientOf(await app.createMerchant())
    const created = await client.invoices.create({ amountUsd: 12.5, productName: "Mug", merchantReference: "order-1" })
    expect(created).toMatchObject({ amountUsd: 12.5, status: "awaiting_payment", productName: "Mug", merchantReference: "order-1" })
    expect(created.paymentUrl).toMatch(new RegExp(`/pay/${created.id}$`))

    const retrieved = await client.invoices.retrieve(created.id)
    expect(retrieved.id).toBe(created.id)
    expect(retrieved.payments).toEqual([])
    const status = await client.invoices.status(created.id)
    expect(status).toMatchObject({ status: "awaiting_payment", paymentCoverage: "no_payment" })

    const voided = await client.invoices.void(created.id)
    expect(voided.status).toBe("voided")

    const other = await client.invoices.create({ amountUsd: 3 })
    const recorded = await client.invoices.recordPayment(other.id, { note: "bank transfer 8841" })
    expect(recorded).toMatchObject({ status: "paid_out_of_band", paidOutOfBandNote: "bank transfer 8841" })
    expect(recorded.paidOutOfBandAt).not.toBeNull()
  })

  it("replays a create with the same idempotency key instead of making a second invoice", async () => {
    const client = clientOf(await app.createMerchant())
    const key = `order-${crypto.randomUUID()}`
    const first = await client.invoices.create({ amountUsd: 7 }, { idempotencyKey: key })
    const again = await client.invoices.create({ amountUsd: 7 }, { idempotencyKey: key })
    expect(again.id).toBe(first.id)
  })

  it("rejects each error status the spec names with CheckoutError: status and the service's message", async () => {
    const merchant = await app.createMerchant()
    const client = clientOf(merchant)

    const invalid = await rejection(client.invoices.create({ amountUsd: 0 }))
    expect(invalid.status).toBe(400)
    expect(invalid.error).toMatch(/^amountUsd /)
    expect((await rejection(client.invoices.retrieve("not-a-uuid"))).status).toBe(400)

    const unknownKey = await rejection(createCheckoutClient({ baseUrl: app.baseUrl, apiKey: "svc_live_nobody" }).invoices.retrieve(crypto.randomUUID()))
    expect(unknownKey).toMatchObject({ status: 401, error: "Invalid API key", retryAfter: null })

    const missing = await rejection(client.invoices.retrieve(crypto.randomUUID()))
    expect(missing.status).toBe(404)
    expect(missing.error).toBe("Invoice not found")

    const invoice = await client.invoices.create({ amountUsd: 4 })
    await client.invoices.void(invoice.id)
    const conflict = await rejection(client.invoices.void(invoice.id))
    expect(conflict.status).toBe(409)
    expect(conflict.error).toMatch(/voided/)

    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setBillingStatus(merchant.merchantId, "blocked")))
    expect((await rejection(client.invoices.create({ amountUsd: 4 }))).status).toBe(403)
    await app.run(Effect.flatMap(Accounts, (accounts) => accounts.setStatus(merchant.merchantId, "disabled")))
    expect(await rejection(client.invoices.retrieve(invoice.id))).toMatchObject({ status: 403, error: "Forbidden" })
  })

  it("surfaces the rate limit as 429 with retryAfter from Retry-After", async () => {
    const client = clientOf(await app.createMerchant(), { maxRetries: 0 })
    const id = crypto.randomUUID()
    const answers = await Promise.allSettled(Array.from({ length: RATE_LIMIT + 1 }, () => client.invoices.status(id)))
    const limited = answers.flatMap((answer) => answer.status === "rejected" && answer.reason instanceof CheckoutError && answer.reason.status === 429 ? [answer.reason] : [])
    expect(limited.length).toBeGreaterThan(0)
    expect(limited[0].retryAfter).toBeGreaterThan(0)
    expect(limited[0].error).toBe(`Rate limit exceeded. Retry after ${limited[0].retryAfter} seconds.`)
  })

  it("delivers webhooks that parseWebhookEvent verifies and types, with the bodies the OpenAPI document declares", async () => {
    const merchant = await app.createMerchant()
    const secret = (await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })).body.secret as string
    receiver.on(`/hooks/${merchant.merchantId}`, (response) => response.writeHead(204).end())
    expect((await merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body: { url: receiver.url(`/hooks/${merchant.merchantId}`) } })).status).toBe(200)

    expect((await merchant.dashboard("/api/dashboard/webhook-settings/test", { method: "POST" })).status).toBe(200)
    const invoice = await clientOf(merchant).invoices.create({ amountUsd: 9 })
    await expect.poll(() => receiver.received(`/hooks/${merchant.merchantId}`).length, { timeout: 60_000, interval: 200 }).toBe(2)

    const events: Array<WebhookEvent> = receiver.received(`/hooks/${merchant.merchantId}`).map((request) =>
      parseWebhookEvent(request.body, request.headers["x-checkout-signature"] as string, secret)
    )
    const test = events.find((event) => event.event === "webhook_test")!
    expect(Schema.decodeUnknownSync(TestEventBody)(test)).toEqual({ event: "webhook_test", livemode: true, invoice: null })
    const created = events.find((event) => event.event === "invoice_created")
    if (created?.event !== "invoice_created") throw new Error("no invoice_created delivered")
    expect(created.invoice.id).toBe(invoice.id)
    expect(created.invoice.status).toBe("awaiting_payment")
    // The declared body is exactly what was sent: no field missing, none undeclared.
    expect(() => Schema.decodeUnknownSync(invoiceEventBody("invoice_created"))(created, { onExcessProperty: "error" })).not.toThrow()
  })
})

/** One scripted answer: a status (with `Retry-After`, a request id, a message of its own), or no answer at all. */
type ScriptedAnswer = { readonly status: number; readonly retryAfter?: string; readonly requestId?: string; readonly error?: string } | "hang"

/** A loopback server answering each request with the next scripted answer (then 200 `{}`), counting requests. */
const scriptedServer = async (script: ReadonlyArray<ScriptedAnswer>) => {
  const seen: Array<{ readonly method: string; readonly url: string; readonly idempotencyKey: string | undefined }> = []
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    request.resume()
    request.on("end", () => {
      const answer = script[seen.length] ?? { status: 200 }
      seen.push({ method: request.method ?? "", url: request.url ?? "", idempotencyKey: request.headers["idempotency-key"] as string | undefined })
      if (answer === "hang") return
      const headers: Record<string, string> = { "content-type": "application/json" }
      if (answer.retryAfter !== undefined) headers["retry-after"] = answer.retryAfter
      if (answer.requestId !== undefined) headers["x-request-id"] = answer.requestId
      response.writeHead(answer.status, headers).end(JSON.stringify(answer.status === 200 ? { id: "answered" } : { error: answer.error ?? `scripted ${answer.status}` }))
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const { port } = server.address() as { port: number }
  return {
    baseUrl: `http://127.0.0.1:${port}`,
    seen,
    close: () => {
      server.closeAllConnections()
      return new Promise<void>((resolve) => server.close(() => resolve()))
    }
  }
}

describe("the SDK's retries (a loopback server answering 503 and 429 with Retry-After)", () => {
  const busy = [{ status: 503, retryAfter: "0" }, { status: 429, retryAfter: "0" }]

  it("retries a read after Retry-After until it succeeds", async () => {
    const server = await scriptedServer(busy)
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x" })
    expect(await client.invoices.retrieve("a")).toEqual({ id: "answered" })
    expect(await client.invoices.status("a")).toEqual({ id: "answered" })
    expect(server.seen.map((request) => request.url)).toEqual(["/api/checkout/invoices/a", "/api/checkout/invoices/a", "/api/checkout/invoices/a",
      "/api/checkout/invoices/a/status"])
    await server.close()
  })

  it("retries a create that has an idempotency key, with the same key", async () => {
    const server = await scriptedServer(busy)
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x" })
    expect(await client.invoices.create({ amountUsd: 1 }, { idempotencyKey: "order-9" })).toEqual({ id: "answered" })
    expect(server.seen.map((request) => request.idempotencyKey)).toEqual(["order-9", "order-9", "order-9"])
    await server.close()
  })

  it("never retries a create without an idempotency key, nor a void or a record-payment without one", async () => {
    const server = await scriptedServer([{ status: 503, retryAfter: "0" }, { status: 503, retryAfter: "0" }, { status: 429, retryAfter: "0" }])
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x" })
    expect(await rejection(client.invoices.create({ amountUsd: 1 }))).toMatchObject({ status: 503, error: "scripted 503", retryAfter: 0 })
    expect((await rejection(client.invoices.void("a"))).status).toBe(503)
    expect((await rejection(client.invoices.recordPayment("a", { note: "n" }))).status).toBe(429)
    expect(server.seen).toHaveLength(3)
    await server.close()
  })

  it("gives up after maxRetries (default 2) with the last answer", async () => {
    const server = await scriptedServer([{ status: 503, retryAfter: "0" }, { status: 503, retryAfter: "0" }, { status: 503, retryAfter: "0" }, { status: 503 }])
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x" })
    expect((await rejection(client.invoices.retrieve("a"))).status).toBe(503)
    expect(server.seen).toHaveLength(3)
    const once = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x", maxRetries: 0 })
    expect(await rejection(once.invoices.retrieve("a"))).toMatchObject({ status: 503, retryAfter: null })
    expect(server.seen).toHaveLength(4)
    await server.close()
  })

  it("does not wait out a Retry-After beyond the retry budget (default 10 s): rejects at once with retryAfter", async () => {
    const server = await scriptedServer([{ status: 429, retryAfter: "20" }, { status: 503, retryAfter: "2" }])
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x" })
    expect(await rejection(client.invoices.retrieve("a"))).toMatchObject({ status: 429, retryAfter: 20, retryable: true })
    expect(server.seen).toHaveLength(1)
    const tight = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x", retryBudgetMs: 1000 })
    expect(await rejection(tight.invoices.retrieve("a"))).toMatchObject({ status: 503, retryAfter: 2 })
    expect(server.seen).toHaveLength(2)
    await server.close()
  })

  it("gives up at timeoutMs when no answer comes: status null, retryable only for a repeatable call", async () => {
    const server = await scriptedServer(["hang", "hang"])
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x", timeoutMs: 300 })
    const read = await rejection(client.invoices.retrieve("a"))
    expect(read).toMatchObject({ status: null, error: "No answer within timeoutMs (300 ms)", requestId: null, retryable: true })
    const create = await rejection(client.invoices.create({ amountUsd: 1 }))
    expect(create).toMatchObject({ status: null, retryable: false })
    expect(create.message).toMatch(/without an idempotency key/)
    expect(server.seen).toHaveLength(2)
    await server.close()
  })

  it("retries a keyed write answered 409 'still in progress' after its Retry-After, but no other 409", async () => {
    const inProgress = { status: 409, retryAfter: "0", error: "A request with this Idempotency-Key is still in progress; retry shortly" }
    const server = await scriptedServer([inProgress, { status: 200 }, { status: 409, error: "Only an invoice awaiting payment can be voided" }])
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x" })
    expect(await client.invoices.create({ amountUsd: 1 }, { idempotencyKey: "order-5" })).toEqual({ id: "answered" })
    expect(await rejection(client.invoices.void("a", { idempotencyKey: "void-a" }))).toMatchObject({ status: 409, retryable: false })
    expect(server.seen.map((request) => request.idempotencyKey)).toEqual(["order-5", "order-5", "void-a"])
    await server.close()
  })

  it("carries the status, the service's message, the request id and whether a retry is safe", async () => {
    const server = await scriptedServer([{ status: 503, retryAfter: "7", requestId: "req_81f2", error: "Try again shortly" }, { status: 404, error: "Invoice not found" }])
    const client = createCheckoutClient({ baseUrl: server.baseUrl, apiKey: "svc_live_x", maxRetries: 0 })
    const busy = await rejection(client.invoices.create({ amountUsd: 1 }, { idempotencyKey: "k" }))
    expect(busy).toMatchObject({ status: 503, error: "Try again shortly", requestId: "req_81f2", retryAfter: 7, retryable: true })
    expect(busy.message).toBe("503: Try again shortly (request req_81f2; safe to retry after 7 s)")
    const missing = await rejection(client.invoices.retrieve("a"))
    expect(missing).toMatchObject({ status: 404, requestId: null, retryable: false })
    expect(missing.message).toBe("404: Invoice not found (retrying the same request will not help)")
    await server.close()
  })
})

describe("the SDK's client options", () => {
  it("refuse a client without an API key at createCheckoutClient, saying what is missing", () => {
    const baseUrl = "https://checkout.example.com"
    expect(() => createCheckoutClient({ baseUrl, apiKey: undefined as unknown as string })).toThrow(/^createCheckoutClient: apiKey is missing \(got undefined\)/)
    expect(() => createCheckoutClient({ baseUrl, apiKey: "" })).toThrow(TypeError)
    expect(() => createCheckoutClient({ baseUrl: "checkout.example.com", apiKey: "svc_live_x" })).toThrow(/baseUrl must be the service's http\(s\) address/)
    expect(() => createCheckoutClient({ baseUrl, apiKey: "svc_live_x", timeoutMs: 0 })).toThrow(/timeoutMs must be a number of at least 1 \(got 0\)/)
    expect(() => createCheckoutClient({ baseUrl, apiKey: "svc_live_x", maxRetries: -1 })).toThrow(/maxRetries must be a number of at least 0/)
    expect(() => EffectCheckoutClient.layer({ baseUrl, apiKey: "" })).toThrow(/apiKey is missing/)
  })
})

/**
 * A proxy in front of the service that answers the first create 429 and the second 503 without
 * forwarding them, then forwards the third but answers 503 instead of the service's answer (the
 * create landed, its answer was lost), then forwards the rest as they are.
 */
const flakyProxy = async (target: string) => {
  let creates = 0
  const server = createServer((request: IncomingMessage, response: ServerResponse) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", async () => {
      const isCreate = request.method === "POST" && request.url === "/api/checkout/invoices"
      const turn = isCreate ? ++creates : 0
      if (turn === 1 || turn === 2) {
        return response.writeHead(turn === 1 ? 429 : 503, { "retry-after": "0", "content-type": "application/json" }).end(JSON.stringify({ error: "injected" }))
      }
      const headers = Object.fromEntries(Object.entries(request.headers).filter(([name]) => ["x-api-key", "content-type", "idempotency-key"].includes(name))) as Record<string,
        string>
      const answer = await fetch(`${target}${request.url}`, { method: request.method, headers, body: chunks.length === 0 ? undefined : Buffer.concat(chunks) })
      const body = await answer.text()
      if (turn === 3) return response.writeHead(503, { "retry-after": "0", "content-type": "application/json" }).end(JSON.stringify({ error: "injected 503" }))
      response.writeHead(answer.status, { "content-type": "application/json" }).end(body)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  return { baseUrl: `http://127.0.0.1:${(server.address() as { port: number }).port}`, creates: () => creates,
    close: () => new Promise<void>((resolve) => server.close(() => resolve())) }
}

describe("a retried create with an idempotency key, against the running service", () => {
  it("makes one invoice when a 429 and a 503 come before the create lands and a 503 replaces its answer", async () => {
    const merchant = await app.createMerchant()
    const proxy = await flakyProxy(app.baseUrl)
    const client = createCheckoutClient({ baseUrl: proxy.baseUrl, apiKey: merchant.apiKey, maxRetries: 3 })
    const invoice = await client.invoices.create({ amountUsd: 21, merchantReference: "order-777" }, { idempotencyKey: "order-777" })
    expect(proxy.creates()).toBe(4)
    const listed = await merchant.dashboard("/api/dashboard/invoices")
    expect(listed.body.invoices.map((entry: { id: string }) => entry.id)).toEqual([invoice.id])
    await proxy.close()
  })
})

describe("the SDK's Effect client (@checkout-invoicing/sdk/effect), made from the API's HttpApi definition", () => {
  const runWith = <A, E>(baseUrl: string, apiKey: string, program: Effect.Effect<A, E, EffectCheckoutClient>) =>
    Effect.runPromise(Effect.result(program.pipe(Effect.provide(EffectCheckoutClient.layer({ baseUrl, apiKey })))))
  /** A failure's error class (the SDK re-exports the service's) and the service's message. */
  const ERROR_CLASSES = { BadGateway, BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests, Unauthorized }
  const tagged = (failure: unknown) => ({
    tag: Object.entries(ERROR_CLASSES).find(([, errorClass]) => failure instanceof errorClass)?.[0] ?? String(failure),
    error: (failure as { error?: string }).error
  })
  const failureOf = (result: Result.Result<unknown, unknown>) => Result.isFailure(result) ? tagged(result.failure) : { tag: "Success", error: undefined }

  it("makes the same five calls, with the service's errors as tagged failures", async () => {
    const merchant = await app.createMerchant()
    const result = await runWith(
      app.baseUrl,
      merchant.apiKey,
      Effect.gen(function*() {
        const { invoices } = yield* EffectCheckoutClient
        const created = yield* invoices.create({ amountUsd: 8.25, productName: "Cap" }, { idempotencyKey: `cap-${merchant.merchantId}` })
        const again = yield* invoices.create({ amountUsd: 8.25, productName: "Cap" }, { idempotencyKey: `cap-${merchant.merchantId}` })
        const retrieved = yield* invoices.retrieve(created.id)
        const status = yield* invoices.status(created.id)
        const voided = yield* invoices.void(created.id)
        const conflict = yield* Effect.flip(invoices.void(created.id))
        const other = yield* invoices.create({ amountUsd: 2 })
        const recorded = yield* invoices.recordPayment(other.id, { note: "cash" })
        const missing = yield* Effect.flip(invoices.retrieve(crypto.randomUUID()))
        return { created, again, retrieved, status, voided, conflict, recorded, missing }
      })
    )
    if (Result.isFailure(result)) throw new Error(`failed: ${JSON.stringify(tagged(result.failure))}`)
    const { created, again, retrieved, status, voided, conflict, recorded, missing } = result.success
    expect(created).toMatchObject({ amountUsd: 8.25, productName: "Cap", status: "awaiting_payment" })
    // The API's schemas decode the answers: timestamps are Dates (the promise client gives their text).
    expect(created.createdAt).toBeInstanceOf(Date)
    expect(again).toEqual(created)
    expect(retrieved.id).toBe(created.id)
    expect(status.status).toBe("awaiting_payment")
    expect(voided.status).toBe("voided")
    expect(tagged(conflict)).toEqual({ tag: "Conflict", error: expect.stringMatching(/voided/) })
    expect(recorded).toMatchObject({ status: "paid_out_of_band", paidOutOfBandNote: "cash" })
    expect(tagged(missing)).toEqual({ tag: "NotFound", error: "Invoice not found" })
  })

  it("fails with Unauthorized on an unknown key", async () => {
    const result = await runWith(app.baseUrl, "svc_live_nobody", Effect.flatMap(EffectCheckoutClient, ({ invoices }) => invoices.status(crypto.randomUUID())))
    expect(failureOf(result)).toEqual({ tag: "Unauthorized", error: "Invalid API key" })
  })

  it("retries a read after a 503 with Retry-After, but not a create without an idempotency key", async () => {
    const server = await scriptedServer([{ status: 503, retryAfter: "0" }, { status: 404 }, { status: 503, retryAfter: "0" }])
    const read = await runWith(server.baseUrl, "svc_live_x", Effect.flatMap(EffectCheckoutClient, ({ invoices }) => invoices.retrieve(crypto.randomUUID())))
    expect(failureOf(read)).toEqual({ tag: "NotFound", error: "scripted 404" })
    expect(server.seen).toHaveLength(2)
    const create = await runWith(server.baseUrl, "svc_live_x", Effect.flatMap(EffectCheckoutClient, ({ invoices }) => invoices.create({ amountUsd: 1 })))
    expect(failureOf(create)).toEqual({ tag: "ServiceUnavailable", error: "scripted 503" })
    expect(server.seen).toHaveLength(3)
    await server.close()
  })

  it("retries a keyed write answered 409 'still in progress', but no other 409", async () => {
    const inProgress = { status: 409, retryAfter: "0", error: "A request with this Idempotency-Key is still in progress; retry shortly" }
    const server = await scriptedServer([inProgress, { status: 404 }, { status: 409, retryAfter: "0" }])
    const voidWith = (key: string) => Effect.flatMap(EffectCheckoutClient, ({ invoices }) => invoices.void(crypto.randomUUID(), { idempotencyKey: key }))
    expect(failureOf(await runWith(server.baseUrl, "svc_live_x", voidWith("void-1")))).toEqual({ tag: "NotFound", error: "scripted 404" })
    expect(failureOf(await runWith(server.baseUrl, "svc_live_x", voidWith("void-2")))).toEqual({ tag: "Conflict", error: "scripted 409" })
    expect(server.seen.map((request) => request.idempotencyKey)).toEqual(["void-1", "void-1", "void-2"])
    await server.close()
  })
})
