import { Effect, Fiber } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { WEBHOOK_TIMEOUT_MS } from "../../src/webhooks/WebhookConnector.ts"
import { startTestApp, type TestApp } from "../support/TestApp.ts"
import { gapsBetween, newPath, privateDatabase, webhookHarness } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

// The attempt's time budget runs on the service's clock: the test steps it with TestClock
// instead of waiting four real 10-second time-outs. A database of its own, so that its dispatcher
// takes no other suite's deliveries.
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

/** Real time, for the request to reach the receiver (TestClock does not move by itself). */
const untilReceived = (count: () => number, expected: number) =>
  Effect.promise(async () => {
    for (let i = 0; i < 500 && count() < expected; i++) await new Promise((resolve) => setTimeout(resolve, 10))
  })

describe("a receiver that hangs", () => {
  it("times out after 10 s on every attempt, is retried 1, 5 and 15 minutes after each, then fails for good", async () => {
    const harness = webhookHarness(app)
    const path = newPath()
    receiver.on(path, () => undefined)
    const merchant = await harness.newMerchant()
    await harness.configure(merchant, receiver.url(path))
    await harness.createInvoice(merchant)
    const received = () => receiver.received(path).length

    const started = performance.now()
    const seen = await harness.underTestClock(harness.withDispatcher({})((dispatcher) =>
      Effect.gen(function*() {
        const counts: Array<number> = []
        for (const [attempt, wait] of [[1, 0], [2, 60_000], [3, 300_000], [4, 900_000]] as const) {
          if (wait > 0) {
            yield* TestClock.adjust(wait - 1)
            yield* dispatcher.runOnce
            counts.push(received()) // not due yet, one millisecond early
            yield* TestClock.adjust(1)
          }
          const running = yield* Effect.forkChild(dispatcher.runOnce)
          yield* untilReceived(received, attempt)
          yield* TestClock.adjust(WEBHOOK_TIMEOUT_MS)
          yield* Fiber.join(running)
          counts.push(received())
        }
        yield* TestClock.adjust("2 hours")
        yield* dispatcher.runOnce
        counts.push(received())
        return counts
      })
    ))
    expect(seen).toEqual([1, 1, 2, 2, 3, 3, 4, 4])
    // No real 10-second waits.
    expect(performance.now() - started).toBeLessThan(10_000)

    const [delivery] = await harness.deliveriesOf(merchant)
    expect(delivery).toMatchObject({ status: "failed", attemptCount: 4, lastStatusCode: null, nextAttemptAt: null })
    // Attempts are recorded when they end: each retry starts its delay after a 10-second hang.
    expect(gapsBetween(delivery.attempts)).toEqual([70_000, 310_000, 910_000])
    for (const attempt of delivery.attempts) {
      expect(attempt).toMatchObject({ statusCode: null, error: "timed out after 10000 ms", responseExcerpt: null, durationMs: 10_000 })
    }
  }, 30_000)
})
