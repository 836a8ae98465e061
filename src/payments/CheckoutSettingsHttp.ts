import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { livemodeOf } from "../http/LivemodeQuery.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { CheckoutSettingsGroup } from "./CheckoutSettingsApi.ts"
import { paymentTimingChecked } from "../http/ValidationErrors.ts"
import { CheckoutSettingsService } from "./CheckoutSettingsService.ts"

export const CheckoutSettingsHttpLive = HttpApiBuilder.group(checkoutApi(CheckoutSettingsGroup), "checkoutSettings", (handlers) =>
  Effect.gen(function*() {
    const settings = yield* CheckoutSettingsService
    return handlers
      .handle("get", ({ query }) => Effect.flatMap(CurrentMerchant, (merchant) => settings.get(merchant.merchantId, livemodeOf(query))))
      .handle("put", ({ payload, query }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          yield* paymentTimingChecked(payload.paymentTiming)
          return yield* settings.save(merchant.merchantId, livemodeOf(query), payload)
        }))
  })).pipe(Layer.provide(CheckoutSettingsService.layer))
