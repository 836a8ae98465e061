import { Clock, Context, Duration, Effect, Layer, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { type AccountDisabled, Accounts, AccountStatusUnavailable, type AuthenticatedMerchant, authenticatedOwner, InvalidApiKey, KeyOwner, selectKeyOwner } from "./Accounts.ts"
import { hashApiKey, looksLikeApiKey } from "./ApiKeyFormat.ts"
import { statusUnavailableOrDie } from "../db/ConnectionFailure.ts"
import { windowCharge, windowConflictUpdate, windowCount, WindowRow } from "./PgRateLimiterStore.ts"
import { API_LIMIT_PREFIX, LIMIT_WINDOW, type RateLimited, RateLimits, retryAfter } from "./RateLimits.ts"

type Admit = (rawKey: string) => Effect.Effect<AuthenticatedMerchant, InvalidApiKey | AccountDisabled | AccountStatusUnavailable | RateLimited>

/** The key's owner and, when the account is active, its API window after this request. */
const AdmissionRow = Schema.Struct({
  ...KeyOwner.fields,
  count: Schema.NullOr(WindowRow.fields.count),
  expiresAtMs: Schema.NullOr(WindowRow.fields.expiresAtMs),
  lastExceeded: Schema.NullOr(WindowRow.fields.lastExceeded)
})

type AdmissionLayer = Layer.Layer<ApiKeyAdmission, never, AppConfig | SqlClient.SqlClient | Accounts | RateLimits>

/**
 * An API-key request to the merchant endpoints: the key's account, counted against that account's
 * per-minute limit (CHECKOUT_API_RATE_LIMIT, shared with the account's sessions). The key is looked
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
      admit: (rawKey) => Effect.tap(accounts.authenticateApiKey(rawKey), (merchant) => rateLimits.api(merchant.merchantId))
    }
  })
)

const decodeAdmission = Schema.decodeUnknownEffect(Schema.Array(AdmissionRow))

const oneStatement = Layer.effect(
  ApiKeyAdmission,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    const { apiRateLimitPerMinute: limit } = yield* AppConfig
    const refillRate = Duration.divideUnsafe(LIMIT_WINDOW, limit)
    const admit: Admit = Effect.fnUntraced(function*(rawKey) {
      if (!looksLikeApiKey(rawKey)) return yield* new InvalidApiKey()
      const keyHash = hashApiKey(rawKey)
      const charge = windowCharge(1, refillRate, limit, yield* Clock.currentTimeMillis)
      // The data-modifying CTE counts only what the lookup found: an unknown or revoked key, or a
      // disabled account, counts nothing.
      const rows = yield* sql`WITH owner AS (${selectKeyOwner(sql, keyHash)}), counted AS (
          INSERT INTO rate_limits AS r (key, count, expires_at_ms, last_exceeded)
          SELECT ${API_LIMIT_PREFIX}::text || owner.merchant_id::text, ${charge.tokens}::double precision,
            ${charge.now + charge.extension}::bigint, false
          FROM owner WHERE owner.status = 'active'
          ${windowConflictUpdate(sql, charge)}
        )
        SELECT owner.key_hash, owner.merchant_id, owner.status, owner.billing_status,
          counted.count, counted.expires_at_ms, counted.last_exceeded
        FROM owner LEFT JOIN counted ON true`.pipe(Effect.catchTag("SqlError", statusUnavailableOrDie(() => new AccountStatusUnavailable())))
      const [row] = yield* decodeAdmission(rows).pipe(Effect.orDie)
      const merchant = yield* authenticatedOwner(row, keyHash)
      if (row.count === null || row.expiresAtMs === null || row.lastExceeded === null) return yield* Effect.die(new Error("an active account's request was not counted"))
      const [count, ttl] = windowCount({ count: row.count, expiresAtMs: row.expiresAtMs, lastExceeded: row.lastExceeded }, charge)
      if (count > limit) return yield* retryAfter(ttl)
      return merchant
    })
    return { admit }
  })
)
