import { Clock, Context, Duration, Effect, Layer } from "effect"
import type { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { type AccountDisabled, Accounts, AccountStatusUnavailable, type AuthenticatedMerchant, authenticatedOwner, InvalidApiKey } from "./Accounts.ts"
import { ApiKeyAdmissionRepo } from "./ApiKeyAdmissionRepo.ts"
import { hashApiKey, looksLikeApiKey } from "./ApiKeyFormat.ts"
import { statusUnavailableOrDie } from "../db/ConnectionFailure.ts"
import { windowCharge, windowCount } from "./PgRateLimiterStore.ts"
import { API_LIMIT_PREFIX, LIMIT_WINDOW, TEST_API_LIMIT_PREFIX, type RateLimited, RateLimits, retryAfter } from "./RateLimits.ts"

type Admit = (rawKey: string) => Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled | AccountStatusUnavailable | RateLimited>

type AdmissionLayer = Layer.Layer<ApiKeyAdmission, Layer.Error<typeof RateLimits.layer>, AppConfig | SqlClient.SqlClient>

/**
 * An API-key request to the merchant endpoints: the key's account, counted against that account's
 * per-minute limit of the key's mode (CHECKOUT_API_RATE_LIMIT; live keys share it with the
 * account's sessions, test keys have a window of their own). The key is looked
 * up on every request, so a revoked key or a disabled account is refused on its next request at
 * every instance; nothing about a key is cached. A key that is unknown, revoked, or whose account
 * is disabled counts nothing.
 */
export class ApiKeyAdmission extends Context.Service<ApiKeyAdmission, { readonly admit: Admit }>()("Accounts/ApiKeyAdmission") {
  /**
   * On the database store, one statement looks the key up and counts the request (one round trip
   * instead of two). With Redis as the store, the lookup and the count are two steps, as for
   * sessions.
   */
  static readonly layer: AdmissionLayer = Layer.unwrap(
    Effect.map(AppConfig, ({ redisUrl }): AdmissionLayer => redisUrl === undefined ? oneStatement : twoSteps)
  )
}

const twoSteps = Layer.effect(
  ApiKeyAdmission,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const rateLimits = yield* RateLimits
    return {
      admit: (rawKey) => Effect.tap(accounts.authenticateApiKey(rawKey), (merchant) => rateLimits.api(merchant.merchantId, merchant.livemode))
    }
  })
).pipe(Layer.provide([Accounts.layer, RateLimits.layer]))

const oneStatement = Layer.effect(
  ApiKeyAdmission,
  Effect.gen(function*() {
    const repo = yield* ApiKeyAdmissionRepo
    const { apiRateLimitPerMinute: limit } = yield* AppConfig
    const refillRate = Duration.divideUnsafe(LIMIT_WINDOW, limit)
    const admit: Admit = Effect.fnUntraced(function*(rawKey) {
      if (!looksLikeApiKey(rawKey)) return yield* new InvalidApiKey()
      const keyHash = hashApiKey(rawKey)
      const charge = windowCharge(1, refillRate, limit, yield* Clock.currentTimeMillis)
      const row = yield* repo.lookUpAndCharge(keyHash, { live: API_LIMIT_PREFIX, test: TEST_API_LIMIT_PREFIX }, charge).pipe(
        Effect.catchTag("SqlError", statusUnavailableOrDie(() => new AccountStatusUnavailable()))
      )
      const merchant = yield* authenticatedOwner(row, keyHash)
      if (row === undefined || row.count === null || row.expiresAtMs === null || row.lastExceeded === null) {
        return yield* Effect.die(new Error("an active account's request was not counted"))
      }
      const [count, ttl] = windowCount({ count: row.count, expiresAtMs: row.expiresAtMs, lastExceeded: row.lastExceeded }, charge)
      if (count > limit) return yield* retryAfter(ttl)
      return merchant
    })
    return { admit }
  })
).pipe(Layer.provide(ApiKeyAdmissionRepo.layer))
