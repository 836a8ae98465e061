import { describe, expect, it } from "@effect/vitest"
import { Context, Effect, Layer } from "effect"
import { WebhookDispatcher } from "../../src/webhooks/WebhookDispatcher.ts"
import { WEBHOOK_EVENTS } from "../../src/webhooks/WebhookEvents.ts"
import { WebhookSettings } from "../../src/webhooks/WebhookSettings.ts"
import { suiteOptions } from "../support/TestApp.ts"
import { inPrivateDatabase, newInvoice, newMerchant, testServices } from "../support/TestLayers.ts"
import { newPath } from "../support/WebhookHarness.ts"
import { startWebhookReceiver, type WebhookReceiver } from "../support/WebhookReceiver.ts"

const server = process.env.DATABASE_URL !== undefined
if (!server) console.log("webhook-wakeup: skipped, NOTIFY wakes the dispatcher on a PostgreSQL server only (DATABASE_URL)")

class Receiver extends Context.Service<Receiver, WebhookReceiver>()("test/webhook-wakeup/Receiver") {
  static readonly layer = Layer.effect(Receiver, Effect.acquireRelease(Effect.promise(() => startWebhookReceiver()), (receiver) => Effect.promise(() => receiver.close())))
}

// The background dispatcher over the domain services, in a database of its own (it takes every
// due delivery there), with a poll a minute apart: only the outbox's NOTIFY can bring an event
// out within seconds.
const suite = Layer.merge(WebhookDispatcher.worker, Receiver.layer).pipe(
  Layer.provideMerge(inPrivateDatabase((url) => testServices({}, { DATABASE_URL: url!, CHECKOUT_WEBHOOK_POLL_MS: "60000" })))
)

describe.skipIf(!server)("the webhook dispatcher on PostgreSQL", () => {
  it.layer(suite, suiteOptions)((it) => {
    it.effect("is woken by the outbox's NOTIFY: an event is delivered at once, not at the next poll", () =>
      Effect.gen(function*() {
        const receiver = yield* Receiver
        const settings = yield* WebhookSettings
        const { merchantId } = yield* newMerchant()
        const path = newPath()
        receiver.on(path, (response) => response.writeHead(200).end())
        yield* Effect.orDie(settings.save(merchantId, receiver.url(path), WEBHOOK_EVENTS))
        yield* settings.rotateSecret(merchantId)
        // The dispatcher's first pass is over; it now waits for a notification or a minute.
        yield* Effect.sleep("1 second")

        const { invoice } = yield* newInvoice(merchantId, { amountUsd: 10 })
        const deadline = Date.now() + 10_000
        while (!receiver.received(path).some((request) => request.headers["x-checkout-event"] === "invoice_created")) {
          if (Date.now() > deadline) throw new Error("no invoice_created delivery within 10 s: the dispatcher was not woken")
          yield* Effect.sleep("50 millis")
        }
        expect(JSON.parse(receiver.received(path).at(-1)!.body).invoice.id).toBe(invoice.id)
      }))
  })
})
