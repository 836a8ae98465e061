import { Effect, Layer } from "effect"
import { HttpServerRequest } from "effect/http"
import { HttpApiMiddleware } from "effect/http-api"
import { Accounts } from "../accounts/Accounts.ts"
import { CurrentMerchant } from "../accounts/CurrentMerchant.ts"
import { Forbidden, ServiceUnavailable, Unauthorized } from "./ApiErrors.ts"

/**
 * Authentication of the five merchant endpoints, in the spec's order: the `X-Api-Key` header,
 * then the `checkout_session` cookie, then `Authorization: Bearer`.
 */
export class MerchantAuthentication extends HttpApiMiddleware.Service<MerchantAuthentication, {
  provides: CurrentMerchant
}>()("Http/MerchantAuthentication", { error: [Unauthorized, Forbidden, ServiceUnavailable] }) {}

export const MerchantAuthenticationLive = Layer.effect(
  MerchantAuthentication,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const apiKey = request.headers["x-api-key"]
        if (apiKey !== undefined) {
          const merchant = yield* accounts.authenticateApiKey(apiKey).pipe(
            Effect.catchTags({
              InvalidApiKey: () => Effect.fail(new Unauthorized({ error: "Invalid API key" })),
              AccountDisabled: () => Effect.fail(new Forbidden({ error: "Forbidden" })),
              AccountStatusUnavailable: () =>
                Effect.fail(new ServiceUnavailable({ error: "Account status cannot be verified; retry after recovery" }))
            })
          )
          return yield* Effect.provideService(httpEffect, CurrentMerchant, { ...merchant, via: "api_key" })
        }
        const hasSession = request.cookies["checkout_session"] !== undefined ||
          (request.headers["authorization"] ?? "").startsWith("Bearer ")
        if (hasSession) return yield* new Unauthorized({ error: "Invalid or expired session" })
        return yield* new Unauthorized({ error: "Missing API key or session" })
      })
  })
)
