import { createClient } from "redis"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"
import { startTcpProxy, type TcpProxy } from "../support/TcpProxy.ts"

const redisUrl = process.env.REDIS_URL
if (redisUrl === undefined) console.log("skipped: Redis faults (REDIS_URL is not set)")

describe.skipIf(redisUrl === undefined)("the rate-limit store on Redis, stalled and down", () => {
  let proxy: TcpProxy
  let app: TestApp

  beforeAll(async () => {
    const target = new URL(redisUrl ?? "redis://127.0.0.1:6379")
    proxy = await startTcpProxy({ host: target.hostname, port: Number(target.port || 6379) })
    app = await startTestApp({ redisUrl: `redis://127.0.0.1:${proxy.port}`, apiRateLimitPerMinute: 3, rateLimitStoreTimeoutMs: 100 })
  })
  afterAll(async () => {
    await app?.close()
    await proxy?.close()
  })

  const fourRequests = async (merchant: TestMerchant) => {
    const statuses: Array<number> = []
    for (let i = 0; i < 4; i++) statuses.push((await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "T" } })).status)
    return statuses
  }

  it("limits while Redis answers, decides alone after a bounded wait while it is stalled or down (the same limit), and limits through Redis again when it is back", async () => {
    expect(await fourRequests(await app.createMerchant())).toEqual([201, 201, 201, 429])

    proxy.stall()
    expect(await fourRequests(await app.createMerchant())).toEqual([201, 201, 201, 429])
    const login = await fetch(`${app.baseUrl}/api/auth/login`, {
      method: "POST",
      headers: { "content-type": "application/json" },
      body: JSON.stringify({ email: "nobody@stall.test", password: "whatever it is" })
    })
    expect(login.status).toBe(401)

    await proxy.cut()
    expect(await fourRequests(await app.createMerchant())).toEqual([201, 201, 201, 429])

    await proxy.restore()
    const back = await app.createMerchant()
    // node-redis reconnects with back-off; the requests are counted in Redis again once it has
    // (this instance's own count refuses the fourth either way).
    const redis = createClient({ url: redisUrl })
    await redis.connect()
    try {
      let counted: string | null = null
      for (let attempt = 0; attempt < 50 && counted === null; attempt++) {
        expect(await fourRequests(back)).toContain(429)
        counted = await redis.get(`checkout:ratelimit:api:${back.merchantId}`)
        if (counted === null) await new Promise((resolve) => setTimeout(resolve, 200))
      }
      expect(Number(counted)).toBeGreaterThan(0)
    } finally {
      await redis.quit()
    }
  })
})
