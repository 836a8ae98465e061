import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { gapsBetween, newPath, privateDatabase, RECEIPTS_ON_SCHEDULE, SCHEDULE, webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

// Four real 10-second time-outs: this suite has a database of its own, so that it can run beside
// the other webhook suite without either dispatcher taking the other's deliveries.
let database: Awaited<ReturnType<typeof privateDatabase>>
let app: TestApp
let receiver: WebhookReceiver

beforeAll(async () => {
  database = await privateDatabase()
  receiver = await startWebhookReceiver()
  app = await startTestApp({ role: "api", webhookAllowLoopback: true, databaseUrl: database.url })
})
afterAll(async () => {
  await app?.close()
  await receiver?.close()
  await database?.drop()
})

describe("a receiver that hangs", () => {
  it("times out after 10 s on every attempt, is retried after exactly 1, 5 and 15 minutes, then fails for good", async () => {
    const harness = webhookHarness(app)
    const path = newPath()
    receiver.on(path, () => undefined)
    const merchant = await harness.newMerchant()
    await harness.configure(merchant, receiver.url(path))
    await harness.createInvoice(merchant)

    const started = performance.now()
    const counts = await harness.stepThrough({}, SCHEDULE, () => receiver.received(path).length)
    expect(counts).toEqual(RECEIPTS_ON_SCHEDULE)
    expect(performance.now() - started).toBeLessThan(4 * 10_000 + 8_000)

    const [delivery] = await harness.deliveriesOf(merchant)
    expect(delivery).toMatchObject({ status: "failed", attemptCount: 4, lastStatusCode: null, nextAttemptAt: null })
    expect(gapsBetween(delivery.attempts)).toEqual([60_000, 300_000, 900_000])
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ statusCode: null, error: "timed out after 10000 ms", responseExcerpt: null })
      expect(attempt.durationMs).toBeGreaterThanOrEqual(9_900)
      expect(attempt.durationMs).toBeLessThan(11_000)
    }
  }, 70_000)
})
