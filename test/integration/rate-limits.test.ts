import { Context, Duration, Effect, Layer } from "effect"
import { TestClock } from "effect/testing"
import { afterAll, beforeAll, describe, expect, it } from "@effect/vitest"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { RateLimits, redisStore } from "../../src/accounts/RateLimits.ts"
import { AppConfig, parseConfig } from "../../src/config/AppConfig.ts"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp
let merchant: TestMerchant

beforeAll(async () => {
  // The limits themselves are under test here, not the store's time bound (redis-faults tests that).
  app = await startTestApp({ apiRateLimitPerMinute: 100, rateLimitStoreTimeoutMs: 30_000 })
  merchant = await app.createMerchant()
})
afterAll(async () => {
  await app?.close()
})

const statusOf = (who: TestMerchant, id: string) => who.api(`/api/checkout/invoices/${id}/status`)

describe("API-key rate limit", () => {
  it("answers 429 with the retry time at the 101st request in a minute, per merchant account", async () => {
    const { body: invoice } = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
    // Each request extends the window by a minute over the limit (600 ms), so the create's one
    // token lapses 600 ms after it: wait that out, so that the count below starts from zero
    // however long the create's answer took on a loaded machine.
    await new Promise((resolve) => setTimeout(resolve, 1_500))
    const statuses: Array<number> = []
    for (let batch = 0; batch < 10; batch++) {
      const responses = await Promise.all(Array.from({ length: 10 }, () => statusOf(merchant, invoice.id)))
      statuses.push(...responses.map((response) => response.status))
    }
    // 100 status requests in bursts of 10: the first 100 of the window, all allowed
    expect(statuses).toHaveLength(100)
    expect(statuses.every((status) => status === 200)).toBe(true)
    const limited = await statusOf(merchant, invoice.id)
    expect(limited.status).toBe(429)
    expect(limited.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
    const retryAfter = Number(limited.headers.get("retry-after"))
    expect(retryAfter).toBeGreaterThan(0)
    expect(retryAfter).toBeLessThanOrEqual(60)
    expect(limited.body.error).toContain(`Retry after ${retryAfter} seconds`)
    const other = await app.createMerchant()
    expect((await other.api("/api/checkout/invoices", { body: { amountUsd: 5 } })).status).toBe(201)
  })
})

describe("API-key requests that are refused", () => {
  // One statement looks the key up and counts the request (ApiKeyAdmission): the count must
  // follow the lookup, so that a leaked, revoked key cannot spend its account's limit.
  it("count nothing: an unknown key, a revoked key, and a disabled account's key", async () => {
    const limited = await startTestApp({ apiRateLimitPerMinute: 3, rateLimitStoreTimeoutMs: 30_000 })
    try {
      const owner = await limited.createMerchant()
      const revoked = await limited.run(Effect.gen(function*() {
        const accounts = yield* Accounts
        const key = yield* accounts.createApiKey(owner.merchantId, "leaked")
        yield* accounts.revokeApiKey(owner.merchantId, key.id)
        return key.rawKey
      }))
      const unknown = `svc_live_${"A".repeat(43)}`
      const path = `/api/checkout/invoices/${crypto.randomUUID()}/status`
      const statusWith = async (apiKey: string) => (await fetch(`${limited.baseUrl}${path}`, { headers: { "x-api-key": apiKey } })).status
      for (let index = 0; index < 5; index++) {
        expect(await statusWith(revoked)).toBe(401)
        expect(await statusWith(unknown)).toBe(401)
      }
      const allowed = [await statusWith(owner.apiKey), await statusWith(owner.apiKey), await statusWith(owner.apiKey)]
      expect(allowed).toEqual([404, 404, 404])
      expect(await statusWith(owner.apiKey)).toBe(429)

      const disabled = await limited.createMerchant()
      await limited.run(Effect.flatMap(Accounts, (accounts) => accounts.setStatus(disabled.merchantId, "disabled")))
      for (let index = 0; index < 5; index++) expect(await statusWith(disabled.apiKey)).toBe(403)
      await limited.run(Effect.flatMap(Accounts, (accounts) => accounts.setStatus(disabled.merchantId, "active")))
      const afterwards = [await statusWith(disabled.apiKey), await statusWith(disabled.apiKey), await statusWith(disabled.apiKey)]
      expect(afterwards).toEqual([404, 404, 404])
      expect(await statusWith(disabled.apiKey)).toBe(429)
    } finally {
      await limited.close()
    }
  })
})

describe("other limits", () => {
  it("limits logins per email address", async () => {
    const email = `${crypto.randomUUID()}@example.com`
    const attempt = () =>
      fetch(`${app.baseUrl}/api/auth/login`, {
        method: "POST",
        headers: { "content-type": "application/json" },
        body: JSON.stringify({ email, password: "wrong password 123" })
      })
    for (let index = 0; index < 10; index++) expect((await attempt()).status).toBe(401)
    const limited = await attempt()
    expect(limited.status).toBe(429)
    expect(limited.headers.get("retry-after")).toMatch(/^\d+$/)
  })

  it("limits the public Solana preparation per client IP, separately from the API", async () => {
    const outcome = await app.run(Effect.gen(function*() {
      const limits = yield* RateLimits
      for (let index = 0; index < 10; index++) yield* limits.solanaPrepare("203.0.113.7")
      const refused = yield* Effect.flip(limits.solanaPrepare("203.0.113.7"))
      yield* limits.solanaPrepare("203.0.113.8")
      return refused
    }))
    expect(outcome._tag).toBe("RateLimited")
  })
})

describe("PostgreSQL rate limiter store", () => {
  it.effect("allows the limit, refuses one more, and allows again when the window has passed", () =>
    Effect.gen(function*() {
      const limits = yield* RateLimits
      for (let index = 0; index < 100; index++) yield* limits.api("merchant-x")
      const refused = yield* Effect.flip(limits.api("merchant-x"))
      expect(refused.retryAfterSeconds).toBeGreaterThan(0)
      expect(refused.retryAfterSeconds).toBeLessThanOrEqual(60)
      yield* TestClock.adjust(Duration.seconds(61))
      yield* limits.api("merchant-x")
      yield* limits.api("merchant-y")
    }).pipe(
      Effect.provide(RateLimits.layerWithoutDependencies.pipe(Layer.provide(RateLimits.store))),
      Effect.provide(TestClock.layer()),
      Effect.provide(app.context)
    ))
})

const sharedDatabase = process.env.DATABASE_URL
describe.skipIf(sharedDatabase === undefined)("two instances on one PostgreSQL", () => {
  it("enforce one limit together", async () => {
    const second = await startTestApp({ apiRateLimitPerMinute: 100, rateLimitStoreTimeoutMs: 30_000 })
    try {
      const fresh = await app.createMerchant()
      const { body: own } = await fresh.api("/api/checkout/invoices", { body: { amountUsd: 5 } })
      expect(own.id).toBeDefined()
      const statuses: Array<number> = []
      for (let index = 0; index < 100; index++) {
        const base = index % 2 === 0 ? app.baseUrl : second.baseUrl
        const response = await fetch(`${base}/api/checkout/invoices/${own.id}/status`, { headers: { "x-api-key": fresh.apiKey } })
        statuses.push(response.status)
      }
      expect(statuses.filter((status) => status === 200)).toHaveLength(99)
      expect(statuses.at(-1)).toBe(429)
    } finally {
      await second.close()
    }
  })
})
describe.skipIf(sharedDatabase === undefined)("two instances on one PostgreSQL, a key revoked at one", () => {
  // No instance caches anything about a key: the revocation holds for the very next request at the other.
  it("is refused on the next request at the other", async () => {
    const second = await startTestApp({ apiRateLimitPerMinute: 100, rateLimitStoreTimeoutMs: 30_000 })
    try {
      const owner = await app.createMerchant()
      const key = await app.run(Effect.flatMap(Accounts, (accounts) => Effect.orDie(accounts.createApiKey(owner.merchantId, "to revoke"))))
      const path = `/api/checkout/invoices/${crypto.randomUUID()}/status`
      const atSecond = async () => (await fetch(`${second.baseUrl}${path}`, { headers: { "x-api-key": key.rawKey } })).status
      expect([await atSecond(), await atSecond()]).toEqual([404, 404])
      await app.run(Effect.flatMap(Accounts, (accounts) => Effect.orDie(accounts.revokeApiKey(owner.merchantId, key.id))))
      expect(await atSecond()).toBe(401)
    } finally {
      await second.close()
    }
  })
})
if (sharedDatabase === undefined) console.log("skipped: two instances on one PostgreSQL (DATABASE_URL is not set)")

const redisUrl = process.env.REDIS_URL
describe.skipIf(redisUrl === undefined)("two instances on one Redis", () => {
  it.live("enforce one limit together", () => {
    const instance = () =>
      RateLimits.layerWithoutDependencies.pipe(
        Layer.provide(redisStore(redisUrl ?? "")),
        Layer.provide(Layer.succeed(AppConfig, { ...parseConfig({ CHECKOUT_ENV: "test" }), redisUrl }))
      )
    const key = `merchant-${crypto.randomUUID()}`
    return Effect.scoped(Effect.gen(function*() {
      const first = Context.get(yield* Layer.build(instance()), RateLimits)
      const second = Context.get(yield* Layer.build(instance()), RateLimits)
      for (let index = 0; index < 100; index++) yield* (index % 2 === 0 ? first : second).api(key)
      const refused = yield* Effect.flip(second.api(key))
      expect(refused._tag).toBe("RateLimited")
    }))
  })
})
if (redisUrl === undefined) console.log("skipped: two instances on one Redis (REDIS_URL is not set)")
