import { Duration, Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { verifyWebhookSignature } from "../../src/webhooks/Signature.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

interface Received {
  readonly headers: IncomingMessage["headers"]
  readonly body: string
}

/** A real receiver on loopback; each test decides how it answers. */
let received: Array<Received> = []
let answer: (response: ServerResponse, request: Received) => void = (response) => response.writeHead(204).end()
let server: Server
let receiverUrl: string
let app: TestApp

beforeAll(async () => {
  server = createServer((request, response) => {
    const chunks: Array<Buffer> = []
    request.on("data", (chunk: Buffer) => chunks.push(chunk))
    request.on("end", () => {
      const entry = { headers: request.headers, body: Buffer.concat(chunks).toString("utf8") }
      received.push(entry)
      answer(response, entry)
    })
  })
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve))
  const address = server.address()
  if (address === null || typeof address === "string") throw new Error("no port")
  receiverUrl = `http://127.0.0.1:${address.port}/hooks/checkout`
  // API-only: no background workers, the tests drive the dispatcher (and its clock) themselves
  app = await startTestApp({ role: "api", webhookAllowLoopback: true })
})
afterAll(async () => {
  await app?.close()
  server.closeAllConnections()
  await new Promise((resolve) => server.close(resolve))
})

const configure = async (merchant: TestMerchant, enabledEvents?: Array<string>) => {
  const saved = await merchant.dashboard("/api/dashboard/webhook-settings", {
    method: "PUT",
    body: { url: receiverUrl, ...(enabledEvents === undefined ? {} : { enabledEvents }) }
  })
  expect(saved.status).toBe(200)
  const secret = await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })
  expect(secret.status).toBe(201)
  return secret.body.secret as string
}

/** Runs a scenario under one TestClock that starts now, so retry delays can be stepped through. */
const underTestClock = <A>(scenario: (dispatcher: WebhookDispatcher["Service"]) => Effect.Effect<A>) =>
  app.run(Effect.gen(function*() {
    yield* TestClock.setTime(Date.now())
    return yield* scenario(yield* WebhookDispatcher)
  }).pipe(Effect.provide(TestClock.layer())))

const deliveries = async (merchant: TestMerchant, query = "") =>
  (await merchant.dashboard(`/api/dashboard/webhook-deliveries${query}`)).body

const INVOICE_FIELDS = [
  "id", "amountUsd", "status", "paymentCoverage", "receivedAmountUsd", "confirmedAmountUsd", "confirmations",
  "paymentDetectedAt", "confirmedAt", "paidOutOfBandAt", "paidOutOfBandNote", "defaultPaymentOptionId",
  "lastPaymentOptionId", "paymentSummary", "lastTransactionHash", "exceptionType", "exceptionStatus",
  "exceptionAction", "exceptionNote", "exceptionClosedAt", "metadata"
].sort()

describe("webhook settings", () => {
  it("validate the URL at save time and never return the secret", async () => {
    const merchant = await app.createMerchant()
    const put = (body: unknown) => merchant.dashboard("/api/dashboard/webhook-settings", { method: "PUT", body })
    expect(await put({ url: "http://hooks.example.com/x" })).toMatchObject({ status: 400 })
    expect(await put({ url: "https://u:p@hooks.example.com/x" })).toMatchObject({ status: 400, body: { error: "url must not contain credentials" } })
    expect(await put({ url: "https://hooks.example.com/x#f" })).toMatchObject({ status: 400, body: { error: "url must not contain a fragment" } })
    expect(await put({ url: "https://hooks.example.com/x", enabledEvents: ["invoice_paid"] })).toMatchObject({ status: 400 })
    const saved = await put({ url: "https://hooks.example.com/x", enabledEvents: ["invoice_confirmed"] })
    expect(saved.body).toEqual({ url: "https://hooks.example.com/x", enabledEvents: ["invoice_confirmed"], hasSecret: false })
    const first = await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })
    const second = await merchant.dashboard("/api/dashboard/webhook-settings/secret", { method: "POST" })
    expect(first.body.secret).toMatch(/^whsec_[A-Za-z0-9_-]{43}$/)
    expect(second.body.secret).not.toBe(first.body.secret)
    const current = await merchant.dashboard("/api/dashboard/webhook-settings")
    expect(current.body).toEqual({ url: "https://hooks.example.com/x", enabledEvents: ["invoice_confirmed"], hasSecret: true })
    expect(JSON.stringify(current.body)).not.toContain(second.body.secret)
    expect((await merchant.api("/api/dashboard/webhook-settings")).status).toBe(403)
  })
})

describe("delivery", () => {
  it("posts a signed {event, invoice} with the spec's fields and headers, and records it", async () => {
    const merchant = await app.createMerchant()
    const secret = await configure(merchant)
    received = []
    answer = (response) => response.writeHead(200, { "content-type": "text/plain" }).end("thanks")
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 12, metadata: { order_id: "o-1" } } })
    await underTestClock((dispatcher) => dispatcher.runOnce)
    expect(received).toHaveLength(1)
    const [request] = received
    expect(verifyWebhookSignature(request.body, request.headers["x-checkout-signature"] as string, secret)).toBe(true)
    expect(request.headers["content-type"]).toBe("application/json")
    expect(request.headers["user-agent"]).toMatch(/checkout-webhooks/)
    expect(request.headers["x-checkout-event"]).toBe("invoice_created")
    const payload = JSON.parse(request.body)
    expect(Object.keys(payload).sort()).toEqual(["event", "invoice"])
    expect(payload.event).toBe("invoice_created")
    expect(Object.keys(payload.invoice).sort()).toEqual(INVOICE_FIELDS)
    expect(payload.invoice).toMatchObject({ id: invoice.id, amountUsd: 12, status: "awaiting_payment", metadata: { order_id: "o-1" } })
    const log = await deliveries(merchant)
    expect(log.deliveries).toHaveLength(1)
    expect(log.deliveries[0]).toMatchObject({
      id: request.headers["x-checkout-delivery"],
      invoiceId: invoice.id,
      event: "invoice_created",
      url: receiverUrl,
      status: "delivered",
      attemptCount: 1,
      lastStatusCode: 200
    })
    expect(log.deliveries[0].attempts[0]).toMatchObject({ statusCode: 200, responseExcerpt: "thanks", error: null, manual: false })
  })

  it("skips events that are switched off", async () => {
    const merchant = await app.createMerchant()
    await configure(merchant, ["invoice_voided"])
    received = []
    answer = (response) => response.writeHead(204).end()
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    await merchant.api(`/api/checkout/invoices/${invoice.id}/void`, { body: {} })
    await underTestClock((dispatcher) => dispatcher.runOnce)
    expect(received.map((request) => request.headers["x-checkout-event"])).toEqual(["invoice_voided"])
    expect(JSON.parse(received[0].body).invoice.status).toBe("voided")
  })

  it("retries after exactly 1, 5 and 15 minutes, then fails for good", async () => {
    const merchant = await app.createMerchant()
    await configure(merchant)
    received = []
    answer = (response) => response.writeHead(500).end("boom")
    await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    const counts = await underTestClock((dispatcher) =>
      Effect.gen(function*() {
        const seen: Array<number> = []
        const step = (duration: Duration.Input) =>
          Effect.gen(function*() {
            yield* TestClock.adjust(duration)
            yield* dispatcher.runOnce
            seen.push(received.length)
          })
        yield* dispatcher.runOnce
        seen.push(received.length)
        yield* step("59 seconds")
        yield* step("1 second")
        yield* step("299 seconds")
        yield* step("1 second")
        yield* step("899 seconds")
        yield* step("1 second")
        yield* step("2 hours")
        return seen
      }))
    expect(counts).toEqual([1, 1, 2, 2, 3, 3, 4, 4])
    const [delivery] = (await deliveries(merchant)).deliveries
    expect(delivery).toMatchObject({ status: "failed", attemptCount: 4, lastStatusCode: 500, nextAttemptAt: null })
    const times = delivery.attempts.map((attempt: { attemptedAt: string }) => Date.parse(attempt.attemptedAt))
    expect([times[1] - times[0], times[2] - times[1], times[3] - times[2]]).toEqual([60_000, 300_000, 900_000])
    expect(delivery.attempts.every((attempt: { error: string }) => attempt.error === "HTTP 500")).toBe(true)
  })

  it("treats a redirect as a failure and does not follow it", async () => {
    const merchant = await app.createMerchant()
    await configure(merchant)
    received = []
    answer = (response, request) =>
      new URL(receiverUrl).pathname === "/hooks/checkout" && request.headers["x-followed"] === undefined
        ? response.writeHead(302, { location: "/elsewhere" }).end()
        : response.writeHead(200).end()
    await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    await underTestClock((dispatcher) => dispatcher.runOnce)
    expect(received).toHaveLength(1)
    const [delivery] = (await deliveries(merchant)).deliveries
    expect(delivery).toMatchObject({ status: "pending", lastStatusCode: 302 })
    expect(delivery.attempts[0].error).toBe("redirects are not followed")
  })

  it("times out a receiver that hangs past 10 seconds", async () => {
    const merchant = await app.createMerchant()
    await configure(merchant)
    received = []
    answer = (response) => setTimeout(() => response.writeHead(200).end(), 12_000).unref()
    await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    const started = Date.now()
    await underTestClock((dispatcher) => dispatcher.runOnce)
    expect(Date.now() - started).toBeLessThan(11_500)
    const [delivery] = (await deliveries(merchant)).deliveries
    expect(delivery.status).toBe("pending")
    expect(delivery.attempts[0].error).toMatch(/timed out after 10000 ms/)
    expect(delivery.attempts[0].durationMs).toBeGreaterThanOrEqual(9_900)
  }, 20_000)

  it("delivers again after a crash between sending and recording (at least once)", async () => {
    const merchant = await app.createMerchant()
    await configure(merchant)
    received = []
    let release: () => void = () => {}
    const arrived = new Promise<void>((resolve) => {
      answer = (response) => {
        resolve()
        release = () => response.writeHead(200).end()
      }
    })
    await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    await underTestClock((dispatcher) =>
      Effect.gen(function*() {
        yield* dispatcher.fanOut
        const sending = yield* Effect.forkChild(dispatcher.sendDue)
        yield* Effect.promise(() => arrived)
        // the process dies: the attempt was sent, nothing was recorded
        yield* Fiber.interrupt(sending)
        release()
        answer = (response) => response.writeHead(200).end()
        yield* dispatcher.runOnce
        expect(received).toHaveLength(1)
        yield* TestClock.adjust("31 seconds")
        yield* dispatcher.runOnce
      }))
    expect(received).toHaveLength(2)
    expect(received[1].headers["x-checkout-delivery"]).toBe(received[0].headers["x-checkout-delivery"])
    const [delivery] = (await deliveries(merchant)).deliveries
    expect(delivery).toMatchObject({ status: "delivered", attemptCount: 1 })
  })
})

describe("delivery log", () => {
  it("searches by delivery id, invoice id, event, URL or response code, filters and pages; redelivers by hand", async () => {
    const merchant = await app.createMerchant()
    await configure(merchant)
    received = []
    answer = (response) => response.writeHead(503).end()
    const { body: first } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 3 } })
    const { body: second } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 4 } })
    await merchant.api(`/api/checkout/invoices/${second.id}/void`, { body: {} })
    await underTestClock((dispatcher) => dispatcher.runOnce)
    const all = await deliveries(merchant)
    expect(all.deliveries).toHaveLength(3)
    const target = all.deliveries.find((delivery: { invoiceId: string }) => delivery.invoiceId === first.id)
    expect((await deliveries(merchant, `?q=${target.id}`)).deliveries.map((d: { id: string }) => d.id)).toEqual([target.id])
    expect((await deliveries(merchant, `?q=${second.id}`)).deliveries).toHaveLength(2)
    expect((await deliveries(merchant, "?q=invoice_voided")).deliveries).toHaveLength(1)
    expect((await deliveries(merchant, "?q=hooks/check")).deliveries).toHaveLength(3)
    expect((await deliveries(merchant, "?q=503")).deliveries).toHaveLength(3)
    expect((await deliveries(merchant, "?event=invoice_created")).deliveries).toHaveLength(2)
    expect((await deliveries(merchant, "?status=delivered")).deliveries).toHaveLength(0)
    const page = await deliveries(merchant, "?limit=2")
    expect(page.deliveries).toHaveLength(2)
    const rest = await deliveries(merchant, `?limit=2&cursor=${page.nextCursor}`)
    expect(rest.deliveries).toHaveLength(1)
    expect(rest.nextCursor).toBeNull()
    expect(new Set([...page.deliveries, ...rest.deliveries].map((d: { id: string }) => d.id)).size).toBe(3)
    expect((await merchant.dashboard("/api/dashboard/webhook-deliveries?status=lost")).status).toBe(400)

    answer = (response) => response.writeHead(200).end()
    const redelivered = await merchant.dashboard(`/api/dashboard/webhook-deliveries/${target.id}/redeliver`, { method: "POST" })
    expect(redelivered.status).toBe(200)
    expect(redelivered.body).toMatchObject({ status: "delivered", lastStatusCode: 200 })
    expect(redelivered.body.attempts.at(-1)).toMatchObject({ manual: true, statusCode: 200 })
    const stranger = await app.createMerchant()
    expect((await stranger.dashboard(`/api/dashboard/webhook-deliveries/${target.id}/redeliver`, { method: "POST" })).status).toBe(404)
  })
})
