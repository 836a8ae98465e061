import { Effect, Layer } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { AppConfig } from "../config/AppConfig.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { ChainWatchersGroup } from "./ChainWatchersApi.ts"
import { chainWatcherStatuses } from "./ChainWatcherStatus.ts"
import { MonitoringRepo } from "./MonitoringRepo.ts"

export const ChainWatchersHttpLive = HttpApiBuilder.group(checkoutApi(ChainWatchersGroup), "chainWatchers", (handlers) =>
  Effect.gen(function*() {
    const monitoring = yield* MonitoringRepo
    const { chains } = yield* AppConfig
    return handlers.handle("list", () => Effect.map(monitoring.chainCursors, (states) => ({ watchers: chainWatcherStatuses(chains, states) })))
  })).pipe(Layer.provide(MonitoringRepo.layer))
