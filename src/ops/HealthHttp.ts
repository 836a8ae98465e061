import { Effect, Layer } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { HealthGroup } from "./HealthApi.ts"
import { HealthErrors } from "./HealthApi.ts"
import { Monitoring } from "./Monitoring.ts"

/** What a 503 from readiness suggests to wait before asking again. */
const RETRY_AFTER_SECONDS = 5

const unavailable = HttpEffect.appendPreResponseHandler((_request, response) => Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(RETRY_AFTER_SECONDS))))
  .pipe(Effect.andThen(Effect.fail(HealthErrors.databaseUnavailable())))

export const HealthHttpLive = HttpApiBuilder.group(checkoutApi(HealthGroup), "health", (handlers) =>
  Effect.gen(function*() {
    const monitoring = yield* Monitoring
    return handlers
      .handle("live", () => Effect.succeed({ status: "ok" as const }))
      .handle("ready", () => Effect.flatMap(monitoring.ready, (ready) => (ready ? Effect.succeed({ status: "ready" as const }) : unavailable)))
  })).pipe(Layer.provide(Monitoring.layer))
