import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { ChainWatchersGroup } from "./ChainWatchersApi.ts"
import { Monitoring } from "./Monitoring.ts"

export const ChainWatchersHttpLive = HttpApiBuilder.group(checkoutApi(ChainWatchersGroup), "chainWatchers", (handlers) =>
  Effect.gen(function*() {
    const monitoring = yield* Monitoring
    return handlers.handle("list", () => monitoring.chainWatchers)
  })).pipe(Layer.provide(Monitoring.layer))
