import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { WEBHOOK_EVENTS } from "../../src/webhooks/WebhookEvents.ts"
import { WEBHOOK_TIMEOUT_MS } from "../../src/webhooks/WebhookConnector.ts"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { WebhookSettings } from "../../src/webhooks/WebhookSettings.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { inPrivateDatabase, newInvoice, newMerchant, testServices } from "../support/TestLayers.ts"
import { newPath } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

/** Five merchants with more deliveries each than their room: 85 due, 80 within the per-merchant caps, 64 within the process's. */
const MERCHANTS = 5
const EVENTS_EACH = 17

class Receiver extends Context.Service<Receiver, WebhookReceiver>()("test/webhooks-in-flight-caps/Receiver") {
  static readonly layer = Layer.effect(Receiver, Effect.acquireRelease(Effect.promise(() => startWebhookReceiver()), (receiver) => Effect.promise(() => receiver.close())))
}

// A database of its own: the dispatcher takes every due delivery it finds.
const suite = Receiver.layer.pipe(Layer.provideMerge(inPrivateDatabase((url) => testServices({}, url === undefined ? {} : { DATABASE_URL: url }))))

it.layer(suite, suiteOptions)((it) => {
  describe("decisions.md: dispatch never waits for an attempt", () => {
    it.effect("holds at most 64 attempts in flight a process and 16 per merchant while every receiver hangs", () =>
      Effect.gen(function*() {
        const receiver = yield* Receiver
        const settings = yield* WebhookSettings
        const paths: Array<string> = []
        const merchants: Array<string> = []
        for (let index = 0; index < MERCHANTS; index++) {
          const path = newPath()
          receiver.on(path, () => undefined)
          const { merchantId } = yield* newMerchant()
          yield* Effect.orDie(settings.save(merchantId, receiver.url(path), WEBHOOK_EVENTS))
          yield* settings.rotateSecret(merchantId)
          for (let event = 0; event < EVENTS_EACH; event++) yield* newInvoice(merchantId, { amountUsd: 3 })
          paths.push(path)
          merchants.push(merchantId)
        }
        const dispatcher = yield* WebhookDispatcher
        const startedAt = Date.now()
        yield* dispatcher.startOnce
        // Returned with every attempt still hanging.
        expect(Date.now() - startedAt).toBeLessThan(WEBHOOK_TIMEOUT_MS)
        const counts = () => paths.map((path) => receiver.received(path).length)
        const total = () => counts().reduce((sum, count) => sum + count, 0)
        while (total() < 64 && Date.now() - startedAt < 60_000) yield* Effect.sleep("50 millis")
        // Nothing more arrives: no other claim runs (no background worker), and none past the caps was started.
        yield* Effect.sleep("1 second")
        expect(total()).toBe(64)
        expect(Math.max(...counts())).toBe(16)
        yield* Effect.flatMap(SqlClient.SqlClient,
          (sql) => sql`UPDATE webhook_deliveries SET next_attempt_at = NULL WHERE status = 'pending' AND merchant_id = ANY(${merchants}::uuid[])`)
      }), 120_000)
  })
})
