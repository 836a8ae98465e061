import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { WebhooksGroup } from "./WebhooksApi.ts"
import { RequestErrors } from "../http/ApiErrors.ts"
import { WebhookErrors } from "./WebhooksApi.ts"
import { WebhookDispatcher } from "./WebhookDispatcher.ts"
import { WEBHOOK_EVENTS } from "./WebhookEvents.ts"
import { WebhookSettings } from "./WebhookSettings.ts"
import { livemodeOf } from "../http/LivemodeQuery.ts"

export const WebhooksHttpLive = HttpApiBuilder.group(checkoutApi(WebhooksGroup), "webhooks", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* WebhookSettings
    const dispatcher = yield* WebhookDispatcher
    return handlers
      .handle("getSettings", ({ query }) => Effect.flatMap(CurrentMerchant, (merchant) => settings.get(merchant.merchantId, livemodeOf(query))))
      .handle("putSettings", ({ payload, query }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const livemode = livemodeOf(query)
          // What a GET answered may come back as it was: hasSecret is read-only, not refused.
          if (payload.hasSecret !== undefined && payload.hasSecret !== (yield* settings.get(merchant.merchantId, livemode)).hasSecret) {
            return yield* WebhookErrors.hasSecretReadOnly()
          }
          return yield* settings.save(merchant.merchantId, payload.url, payload.enabledEvents ?? WEBHOOK_EVENTS, livemode).pipe(
            Effect.catchTag("InvalidWebhookUrl", (invalid) => Effect.fail(WebhookErrors.invalidUrl(invalid.reason)))
          )
        }))
      .handle("sendTest", ({ query }) => Effect.flatMap(CurrentMerchant, (merchant) => dispatcher.sendTest(merchant.merchantId, livemodeOf(query))))
      .handle("rotateSecret",
        ({ query }) => Effect.flatMap(CurrentMerchant, (merchant) => Effect.map(settings.rotateSecret(merchant.merchantId, livemodeOf(query)), (secret) => ({ secret }))))
      .handle("listDeliveries", ({ query }) =>
        Effect.flatMap(CurrentMerchant, (merchant) =>
          dispatcher.list(merchant.merchantId, {
            ...query,
            livemode: livemodeOf(query),
            limit: query.limit === undefined ? undefined : Number(query.limit)
          }).pipe(
            Effect.catchTag("InvalidCursor", () => Effect.fail(RequestErrors.invalidCursor()))
          )))
      .handle("redeliver", ({ params }) =>
        Effect.flatMap(CurrentMerchant, (merchant) =>
          dispatcher.redeliver(merchant.merchantId, params.id).pipe(
            Effect.catchTag("DeliveryNotFound", () => Effect.fail(WebhookErrors.deliveryNotFound()))
          )))
  })).pipe(Layer.provide([WebhookSettings.layer, WebhookDispatcher.layer]))
