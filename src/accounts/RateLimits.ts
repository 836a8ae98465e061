import { Clock, Context, Duration, Effect, Layer } from "effect"
import { RateLimiter } from "effect/persistence"
import { AppConfig } from "../config/AppConfig.ts"
import { makeLocalWindows } from "./LocalWindows.ts"
import { layerStorePostgres } from "./PgRateLimiterStore.ts"
import { RateLimited } from "../domain/Errors.ts"

export { RateLimited } from "../domain/Errors.ts"

/** Every limit's window. */
export const LIMIT_WINDOW = Duration.minutes(1)

/** The store key of a merchant account's API limit (live API keys and sessions count together). */
export const API_LIMIT_PREFIX = "api:"
/** The store key of a merchant account's test-key API limit: test mode has a window of its own. */
export const TEST_API_LIMIT_PREFIX = "api-test:"

/** Over the limit: the time until the window frees a token, in whole seconds (at least one). */
export const retryAfter = (ttlMillis: number) => new RateLimited({ retryAfterSeconds: Math.max(1, Math.ceil(ttlMillis / 1000)) })

/** What one of `instances` instances admits alone while the shared store is unavailable (at least one). */
export const instanceShare = (limit: number, instances: number) => Math.max(1, Math.floor(limit / instances))

const SHARE_SUFFIX = "\u0000share"

/** Local windows kept at most (one per key seen in the last minute); past it the oldest is dropped. */
const LOCAL_WINDOW_KEYS = 100_000

/**
 * The service's rate limits, all fixed windows of one minute in a store every instance shares
 * (the database, or Redis when REDIS_URL is set):
 * - the five API-key endpoints: CHECKOUT_API_RATE_LIMIT per merchant account;
 * - the dashboard API, the simulator and the key routes: CHECKOUT_DASHBOARD_RATE_LIMIT per
 *   account, and CHECKOUT_DASHBOARD_ADDRESS_RATE_LIMIT per client address (counted before the
 *   session is checked, so that an unauthenticated flood is refused cheaply);
 * - dashboard logins: CHECKOUT_LOGIN_RATE_LIMIT per email address, and
 *   CHECKOUT_LOGIN_ADDRESS_RATE_LIMIT per client address (a flood of random emails);
 * - sign-ups: CHECKOUT_SIGNUP_RATE_LIMIT per client address;
 * - the public Solana preparation: CHECKOUT_SOLANA_PREPARE_RATE_LIMIT per client IP;
 * - the payer page's simulated payments of test invoices: the same limit per client IP, in a window of their own;
 * - the payers' refund requests: CHECKOUT_REFUND_RATE_LIMIT per client IP.
 *
 * Every instance also counts what it admits in its own memory (LocalWindows): it never admits more
 * than the limit itself, whatever the store says or how late it says it. When the store fails or
 * does not answer within CHECKOUT_RATE_LIMIT_STORE_TIMEOUT_MS, the instance decides alone, within
 * its share of the limit (the limit divided by CHECKOUT_RATE_LIMIT_INSTANCES): a stalled store
 * slows nothing down and lets no burst through.
 */
export class RateLimits extends Context.Service<RateLimits, {
  /** The merchant endpoints' limit; test keys (livemode false) count in a window of their own. */
  readonly api: (merchantId: string, livemode?: boolean) => Effect.Effect<void, RateLimited>
  readonly dashboard: (merchantId: string) => Effect.Effect<void, RateLimited>
  readonly dashboardFromAddress: (ip: string) => Effect.Effect<void, RateLimited>
  readonly login: (email: string) => Effect.Effect<void, RateLimited>
  readonly loginFromAddress: (ip: string) => Effect.Effect<void, RateLimited>
  readonly signup: (ip: string) => Effect.Effect<void, RateLimited>
  readonly solanaPrepare: (ip: string) => Effect.Effect<void, RateLimited>
  readonly testPayment: (ip: string) => Effect.Effect<void, RateLimited>
  readonly refundRequest: (ip: string) => Effect.Effect<void, RateLimited>
}>()("Accounts/RateLimits") {
  static readonly layerWithoutDependencies = Layer.effect(
    RateLimits,
    Effect.gen(function*() {
      const limiter = yield* RateLimiter.RateLimiter
      const config = yield* AppConfig
      const storeWait = Duration.millis(config.rateLimitStoreTimeoutMs)
      const windowMillis = Duration.toMillis(LIMIT_WINDOW)
      const local = makeLocalWindows(LOCAL_WINDOW_KEYS)
      const instances = config.rateLimitInstances

      /** Without the store: admitted within this instance's share (the ceiling's token is already counted). */
      const decideLocally = (key: string, limit: number, why: string, cause?: unknown) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const share = instanceShare(limit, instances)
          if (share < limit) {
            const own = local.take(`${key}${SHARE_SUFFIX}`, share, windowMillis, now)
            if (!own.taken) {
              local.giveBack(key, limit, windowMillis, now)
              return Effect.fail(retryAfter(own.ttl))
            }
          }
          return Effect.logWarning(`${why}; decided by this instance (${share} a minute)`, ...(cause === undefined ? [] : [cause]))
        })

      const countShare = (key: string, limit: number) =>
        instanceShare(limit, instances) < limit
          ? Effect.flatMap(Clock.currentTimeMillis, (now) => Effect.sync(() => local.take(`${key}${SHARE_SUFFIX}`, instanceShare(limit, instances), windowMillis, now)))
          : Effect.void

      const consume = (key: string, limit: number) =>
        Effect.flatMap(Clock.currentTimeMillis, (now) => {
          const ceiling = local.take(key, limit, windowMillis, now)
          if (!ceiling.taken) return Effect.fail(retryAfter(ceiling.ttl))
          return limiter.consume({ key, limit, window: LIMIT_WINDOW, algorithm: "fixed-window", onExceeded: "fail" }).pipe(
            Effect.andThen(countShare(key, limit)),
            Effect.asVoid,
            Effect.catch(({ reason }) =>
              reason._tag === "RateLimitExceeded"
                ? Effect.flatMap(Clock.currentTimeMillis, (later) => {
                  local.giveBack(key, limit, windowMillis, later)
                  return Effect.fail(retryAfter(Duration.toMillis(reason.retryAfter)))
                })
                : decideLocally(key, limit, "Rate limit store unavailable", reason)
            ),
            // A store that does not answer (Redis or PostgreSQL stalled, a client queueing commands
            // while it reconnects) must not hold the request: after a bounded wait this instance decides.
            Effect.timeoutOrElse({
              duration: storeWait,
              orElse: () => decideLocally(key, limit, `Rate limit store did not answer within ${config.rateLimitStoreTimeoutMs} ms`)
            })
          )
        })
      return {
        api: Effect.fnUntraced(function*(merchantId, livemode = true) {
          return yield* consume(`${livemode ? API_LIMIT_PREFIX : TEST_API_LIMIT_PREFIX}${merchantId}`, config.apiRateLimitPerMinute)
        }),
        dashboard: Effect.fnUntraced(function*(merchantId) {
          return yield* consume(`dashboard:${merchantId}`, config.dashboardRateLimitPerMinute)
        }),
        dashboardFromAddress: Effect.fnUntraced(function*(ip) {
          return yield* consume(`dashboard-ip:${ip}`, config.dashboardAddressRateLimitPerMinute)
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
        }),
        testPayment: Effect.fn("RateLimits.testPayment")(function*(ip) {
          return yield* consume(`test-payment:${ip}`, config.solanaPrepareRateLimitPerMinute)
        }),
        refundRequest: Effect.fn("RateLimits.refundRequest")(function*(ip) {
          return yield* consume(`refund-request:${ip}`, config.refundRequestRateLimitPerMinute)
        })
      }
    })
  ).pipe(Layer.provide(RateLimiter.layer))

  /** The shared store: Redis when REDIS_URL is set, else the service's database. */
  static readonly store = Layer.unwrap(Effect.gen(function*() {
    const { redisUrl } = yield* AppConfig
    return redisUrl === undefined ? layerStorePostgres : redisStore(redisUrl)
  }))

  /** Over the shared store (a test swaps the store on `layerWithoutDependencies`). */
  static readonly layer = RateLimits.layerWithoutDependencies.pipe(Layer.provide(RateLimits.store))
}

/** Redis's client is loaded only when REDIS_URL is set (a process without it never pays for it). */
export const redisStore = (url: string) =>
  Layer.unwrap(Effect.map(
    Effect.promise(() => import("@effect/platform-node/NodeRedis")),
    (NodeRedis) => RateLimiter.layerStoreRedis({ prefix: "checkout:ratelimit:" }).pipe(Layer.provide(NodeRedis.layer({ url })))
  ))
