import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { startTcpProxy, type TcpProxy } from "../support/TcpProxy.ts"

/**
 * The API-key limit (100 a minute per merchant account) under a burst of concurrent requests,
 * with Redis as the rate-limit store: healthy, and stalled (every answer later than the store's
 * time bound). A late or missing answer used to let the request through.
 */
const redisUrl = process.env.REDIS_URL
const databaseUrl = process.env.DATABASE_URL
if (redisUrl === undefined) console.log("skipped: rate-limit bursts on Redis (REDIS_URL is not set)")
if (redisUrl !== undefined && databaseUrl === undefined) console.log("skipped: rate-limit bursts on two instances (DATABASE_URL is not set)")

const LIMIT = 100
const reachesTheLimit = (admitted: number) => expect([LIMIT - 1, LIMIT]).toContain(admitted)

/** One invoice, then `count` concurrent status reads of it at each instance: how many reads were admitted. */
const burst = async (merchant: TestMerchant, count: number, instances: ReadonlyArray<TestApp>) => {
  const created = await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "Burst" } })
  expect(created.status).toBe(201)
  const answers = await Promise.all(
    instances.flatMap((instance) =>
      Array.from({ length: count }, () =>
        fetch(`${instance.baseUrl}/api/checkout/invoices/${created.body.id}/status`, { headers: { "x-api-key": merchant.apiKey } })
          .then(async (response) => ({ status: response.status, retryAfter: response.headers.get("retry-after"), body: await response.json() })))
    )
  )
  // The store's window (Effect's fixed window) lasts window/limit per token counted: the create's
  // token may have expired before the burst (a loaded machine), or still count. So the burst itself
  // gets the limit, or one less.
  const admitted = answers.filter((answer) => answer.status === 200).length
  const refused = answers.filter((answer) => answer.status === 429)
  expect(answers.length - refused.length).toBe(admitted)
  for (const answer of refused) {
    expect(answer.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
    expect(answer.retryAfter).toMatch(/^\d+$/)
  }
  return admitted
}

describe.skipIf(redisUrl === undefined)("300 concurrent API-key requests of one merchant, Redis as the store", () => {
  let proxy: TcpProxy
  let app: TestApp

  beforeAll(async () => {
    const target = new URL(redisUrl ?? "redis://127.0.0.1:6379")
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) })
    // The store's production time bound (100 ms with Redis): a burst makes some answers late.
    app = await startTestApp({ redisUrl: `redis://127.0.0.1:${proxy.port}`, apiRateLimitPerMinute: LIMIT, rateLimitStoreTimeoutMs: 100 })
  })
  afterAll(async () => {
    await proxy?.restore()
    await app?.close()
    await proxy?.close()
  })

  it("admits exactly the limit while Redis answers", { timeout: 60_000 }, async () => {
    reachesTheLimit(await burst(await app.createMerchant(), 300, [app]))
  })

  it("admits at most the limit while Redis is stalled", { timeout: 60_000 }, async () => {
    const merchant = await app.createMerchant()
    proxy.stall()
    try {
      reachesTheLimit(await burst(merchant, 300, [app]))
    } finally {
      await proxy.restore()
    }
  })
})

describe.skipIf(redisUrl === undefined || databaseUrl === undefined)("two instances on one Redis and one PostgreSQL", () => {
  let proxy: TcpProxy
  const apps: Array<TestApp> = []

  beforeAll(async () => {
    const target = new URL(redisUrl ?? "redis://127.0.0.1:6379")
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) })
  })
  afterAll(async () => {
    await proxy?.restore()
    for (const app of apps) await app.close()
    await proxy?.close()
  })

  const instances = async (settings: { readonly rateLimitStoreTimeoutMs: number }) => {
    const started = await Promise.all(
      [0, 1].map(() => startTestApp({ redisUrl: `redis://127.0.0.1:${proxy.port}`, apiRateLimitPerMinute: LIMIT, rateLimitInstances: 2, ...settings }))
    )
    apps.push(...started)
    return started
  }

  // Each instance alone would admit 100: only Redis's atomic count keeps the two to 100 together.
  it("admit exactly the limit together while Redis answers (its count is atomic)", { timeout: 90_000 }, async () => {
    const [first, second] = await instances({ rateLimitStoreTimeoutMs: 30_000 })
    reachesTheLimit(await burst(await first.createMerchant(), 150, [first, second]))
  })

  it("admit at most the limit together while Redis is stalled: each its share", { timeout: 90_000 }, async () => {
    const [first, second] = await instances({ rateLimitStoreTimeoutMs: 100 })
    const merchant = await first.createMerchant()
    proxy.stall()
    try {
      reachesTheLimit(await burst(merchant, 150, [first, second]))
    } finally {
      await proxy.restore()
    }
  })
})
