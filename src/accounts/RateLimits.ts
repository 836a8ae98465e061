import { Context, Data, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import { AppConfig } from "../config/AppConfig.ts"
import { layerStorePostgres } from "./PgRateLimiterStore.ts"

export class RateLimited extends Data.TaggedError("RateLimited")<{ readonly retryAfterSeconds: number }> {}

export const rateLimitMessage = (error: RateLimited) => `Rate limit exceeded. Retry after ${error.retryAfterSeconds} seconds.`

/** Every limit's window. */
export const LIMIT_WINDOW = Duration.minutes(1)

/** The store key of a merchant account's API limit (API keys and sessions count together). */
export const API_LIMIT_PREFIX = "api:"

/** Over the limit: the time until the window frees a token, in whole seconds (at least one). */
export const retryAfter = (ttlMillis: number) => new RateLimited({ retryAfterSeconds: Math.max(1, Math.ceil(ttlMillis / 1000)) })

/**
 * The service's rate limits, all fixed windows of one minute in a store every instance shares
 * (the database, or Redis when REDIS_URL is set):
 * - the five API-key endpoints: CHECKOUT_API_RATE_LIMIT per merchant account;
 * - dashboard logins: CHECKOUT_LOGIN_RATE_LIMIT per email address, and
 *   CHECKOUT_LOGIN_ADDRESS_RATE_LIMIT per client address (a flood of random emails);
 * - sign-ups: CHECKOUT_SIGNUP_RATE_LIMIT per client address;
 * - the public Solana preparation: CHECKOUT_SOLANA_PREPARE_RATE_LIMIT per client IP.
 * A store failure, or no answer within CHECKOUT_RATE_LIMIT_STORE_TIMEOUT_MS, lets the request
 * through (logged): availability wins over limiting.
 */
export class RateLimits extends Context.Service<RateLimits, {
  readonly api: (merchantId: string) => Effect.Effect<void, RateLimited>
  readonly login: (email: string) => Effect.Effect<void, RateLimited>
  readonly loginFromAddress: (ip: string) => Effect.Effect<void, RateLimited>
  readonly signup: (ip: string) => Effect.Effect<void, RateLimited>
  readonly solanaPrepare: (ip: string) => Effect.Effect<void, RateLimited>
}>()("Accounts/RateLimits") {
  static readonly layer = Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      const config = yield* AppConfig
      const storeWait = Duration.millis(config.rateLimitStoreTimeoutMs)
      const consume = (key: string, limit: number) =>
        limiter.consume({ key, limit, window: LIMIT_WINDOW, algorithm: "fixed-window", onExceeded: "fail" }).pipe(
          Effect.asVoid,
          Effect.catch((error) =>
            error.reason._tag === "RateLimitExceeded"
              ? Effect.fail(retryAfter(Duration.toMillis(error.reason.retryAfter)))
              : Effect.logWarning("Rate limit store unavailable; request allowed", error)
          ),
          // A store that does not answer (Redis or PostgreSQL stalled, a client queueing commands
          // while it reconnects) must not hold the request: after a bounded wait it is let through.
          Effect.timeoutOrElse({
            duration: storeWait,
            orElse: () => Effect.logWarning(`Rate limit store did not answer within ${config.rateLimitStoreTimeoutMs} ms; request allowed`)
          })
        )
      return {
        api: Effect.fnUntraced(function*(merchantId) {
          return yield* consume(`${API_LIMIT_PREFIX}${merchantId}`, config.apiRateLimitPerMinute)
        }),
        login: Effect.fn("RateLimits.login")(function*(email) {
          return yield* consume(`login:${email.toLowerCase()}`, config.loginAttemptsPerMinute)
        }),
        loginFromAddress: Effect.fn("RateLimits.loginFromAddress")(function*(ip) {
          return yield* consume(`login-ip:${ip}`, config.loginAddressAttemptsPerMinute)
        }),
        signup: Effect.fn("RateLimits.signup")(function*(ip) {
          return yield* consume(`signup-ip:${ip}`, config.signupsPerMinute)
        }),
        solanaPrepare: Effect.fn("RateLimits.solanaPrepare")(function*(ip) {
          return yield* consume(`solana-prepare:${ip}`, config.solanaPrepareRateLimitPerMinute)
        })
      }
    })
  ).pipe(Layer.provide(RateLimiter.layer))

  /** The shared store: Redis when REDIS_URL is set, else the service's database. */
  static readonly store = Layer.unwrap(Effect.gen(function*() {
    const { redisUrl } = yield* AppConfig
    return redisUrl === undefined ? layerStorePostgres : redisStore(redisUrl)
  }))
}

/** Redis's client is loaded only when REDIS_URL is set (a process without it never pays for it). */
export const redisStore = (url: string) =>
  Layer.unwrap(Effect.map(
    Effect.promise(() => import("@effect/platform-node/NodeRedis")),
    (NodeRedis) => RateLimiter.layerStoreRedis({ prefix: "checkout:ratelimit:" }).pipe(Layer.provide(NodeRedis.layer({ url })))
  ))
