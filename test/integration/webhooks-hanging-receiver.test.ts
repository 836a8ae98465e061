import { Effect, Exit, Layer, Scope } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WEBHOOK_TIMEOUT_MS } from "../../src/webhooks/WebhookNetwork.ts"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { privateDatabase } from "../support/PrivateDatabase.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { newPath, webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

const HANGING_EVENTS = 80
/** The bound: another merchant's webhook is not held up by a hanging receiver. */
const OTHER_MERCHANT_WITHIN_MS = 1_000

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms))

/**
 * The background dispatcher in real time: one merchant's receiver never answers (each attempt
 * waits the spec's 10-second time-out), and another merchant's webhook still goes out at once.
 */
describe("a hanging receiver and the other merchants' webhooks", () => {
  let app: TestApp
  let hanging: WebhookReceiver
  let healthy: WebhookReceiver
  let database: Awaited<ReturnType<typeof privateDatabase>>
  let workers: Scope.Closeable | undefined

  beforeAll(async () => {
    // Its own database: the dispatcher takes every due delivery it finds.
    database = await privateDatabase()
    app = await startTestApp({}, {
      ...(database.url === undefined ? {} : { DATABASE_URL: database.url }),
      // The embedded database has no NOTIFY: a short poll stands in for it.
      CHECKOUT_WEBHOOK_POLL_MS: "100"
    })
    hanging = await startWebhookReceiver()
    healthy = await startWebhookReceiver()
  }, 120_000)

  afterAll(async () => {
    if (workers !== undefined) await Effect.runPromise(Scope.close(workers, Exit.void))
    await app?.close()
    await hanging?.close()
    await healthy?.close()
    await database?.drop()
  })

  it(`delivers another merchant's webhook within ${OTHER_MERCHANT_WITHIN_MS} ms while ${HANGING_EVENTS} attempts hang`, async () => {
    const harness = webhookHarness(app)
    const stuck = await harness.newMerchant()
    const stuckPath = newPath()
    hanging.on(stuckPath, () => undefined)
    await harness.configure(stuck, hanging.url(stuckPath))
    for (let index = 0; index < HANGING_EVENTS; index++) await harness.createInvoice(stuck)
    const other = await harness.newMerchant()
    const otherPath = newPath()
    healthy.on(otherPath, (response) => response.writeHead(204).end())
    await harness.configure(other, healthy.url(otherPath))

    workers = await Effect.runPromise(Scope.make())
    await app.run(Layer.buildWithScope(WebhookDispatcher.worker, workers))
    // The hanging receiver has taken all it will get before its attempts time out.
    const hangingSince = Date.now()
    let taken = -1
    while (hanging.received(stuckPath).length !== taken) {
      taken = hanging.received(stuckPath).length
      await sleep(500)
    }
    expect(taken).toBeGreaterThan(0)

    const created = await harness.createInvoice(other)
    const createdAt = Date.now()
    while (healthy.received(otherPath).length === 0 && Date.now() - createdAt < 2 * WEBHOOK_TIMEOUT_MS) await sleep(10)
    const waited = Date.now() - createdAt
    console.log(`hanging receiver: ${taken} attempts in flight; the other merchant's webhook arrived after ${waited} ms`)
    expect(waited).toBeLessThan(OTHER_MERCHANT_WITHIN_MS)
    expect(JSON.parse(healthy.received(otherPath)[0]?.body ?? "null")?.invoice?.id).toBe(created.id)
    // Still within the hanging attempts' time-out: the measurement is not an artefact of them ending.
    expect(Date.now() - hangingSince).toBeLessThan(WEBHOOK_TIMEOUT_MS)
    await harness.parkDeliveries()
  }, 120_000)
})
