import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../accounts/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { Api } from "../http/Api.ts"
import { BadRequest, NotFound } from "../http/ApiErrors.ts"
import { urlProblem } from "./Destination.ts"
import { WebhookDispatcher } from "./WebhookDispatcher.ts"
import { WEBHOOK_EVENTS } from "./WebhookEvents.ts"
import { WebhookSettings } from "./WebhookSettings.ts"

export const WebhooksHttpLive = HttpApiBuilder.group(Api, "webhooks", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* WebhookSettings
    const dispatcher = yield* WebhookDispatcher
    const { webhookAllowLoopback } = yield* AppConfig
    return handlers
      .handle("getSettings", () => Effect.flatMap(CurrentMerchant, (merchant) => settings.get(merchant.merchantId)))
      .handle("putSettings", ({ payload }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          if (payload.url !== null) {
            const problem = urlProblem(payload.url, webhookAllowLoopback)
            if (problem !== undefined) return yield* new BadRequest({ error: problem })
          }
          return yield* settings.save(merchant.merchantId, payload.url, payload.enabledEvents ?? WEBHOOK_EVENTS)
        }))
      .handle("rotateSecret", () =>
        Effect.flatMap(CurrentMerchant, (merchant) => Effect.map(settings.rotateSecret(merchant.merchantId), (secret) => ({ secret }))))
      .handle("listDeliveries", ({ query }) =>
        Effect.flatMap(CurrentMerchant, (merchant) =>
          dispatcher.list(merchant.merchantId, { ...query, limit: query.limit === undefined ? undefined : Number(query.limit) })))
      .handle("redeliver", ({ params }) =>
        Effect.flatMap(CurrentMerchant, (merchant) =>
          dispatcher.redeliver(merchant.merchantId, params.id).pipe(
            Effect.catchTag("DeliveryNotFound", () => Effect.fail(new NotFound({ error: "Delivery not found" })))
          )))
  }))
