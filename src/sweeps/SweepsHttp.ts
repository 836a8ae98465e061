import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { livemodeOf } from "../http/LivemodeQuery.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { SweepsGroup } from "./SweepsApi.ts"
import { Sweeps } from "./Sweeps.ts"

export const SweepsHttpLive = HttpApiBuilder.group(checkoutApi(SweepsGroup), "sweeps", (handlers) =>
  Effect.gen(function*() {
    const sweeps = yield* Sweeps
    return handlers.handle("list", ({ query }) => Effect.flatMap(CurrentMerchant, (merchant) => sweeps.list(merchant.merchantId, query.status, livemodeOf(query))))
  })).pipe(Layer.provide(Sweeps.layer))
