import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { newPath, webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

const server = process.env.DATABASE_URL !== undefined
if (!server) console.log("webhook-wakeup: skipped, NOTIFY wakes the dispatcher on a PostgreSQL server only (DATABASE_URL)")

describe.skipIf(!server)("the webhook dispatcher on PostgreSQL", () => {
  let app: TestApp
  let receiver: WebhookReceiver
  let database: Awaited<ReturnType<typeof privateDatabase>>
  let workers: Scope.Closeable

  beforeAll(async () => {
    database = await privateDatabase()
    // A poll a minute apart: only the outbox's NOTIFY can bring an event out within seconds.
    app = await startTestApp({}, { DATABASE_URL: database.url!, CHECKOUT_WEBHOOK_POLL_MS: "60000" })
    receiver = await startWebhookReceiver()
    workers = await Effect.runPromise(Scope.make())
    await app.run(Layer.buildWithScope(WebhookDispatcher.worker, workers))
  }, 120_000)

  afterAll(async () => {
    if (workers !== undefined) await Effect.runPromise(Scope.close(workers, Exit.void))
    await app?.close()
    await receiver?.close()
    await database?.drop()
  })

  it("is woken by the outbox's NOTIFY: an event is delivered at once, not at the next poll", async () => {
    const merchant = await app.createMerchant()
    const path = newPath()
    receiver.on(path, (response) => response.writeHead(200).end())
    await webhookHarness(app).configure(merchant, receiver.url(path))
    // The dispatcher's first pass is over; it now waits for a notification or a minute.
    await new Promise((resolve) => setTimeout(resolve, 1_000))

    const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 10 } })
    expect(created.status).toBe(201)
    const deadline = Date.now() + 10_000
    while (!receiver.received(path).some((request) => request.headers["x-checkout-event"] === "invoice_created")) {
      if (Date.now() > deadline) throw new Error("no invoice_created delivery within 10 s: the dispatcher was not woken")
      await new Promise((resolve) => setTimeout(resolve, 50))
    }
    expect(JSON.parse(receiver.received(path).at(-1)!.body).invoice.id).toBe(created.body.id)
  })
})
