import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { type Answer, publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"

/**
 * The dashboard API, the development simulator and the key routes are limited per account
 * (CHECKOUT_DASHBOARD_RATE_LIMIT) and per client address (CHECKOUT_DASHBOARD_ADDRESS_RATE_LIMIT,
 * counted before authentication, so that a flood of requests without a valid session, or with a
 * malformed id, is refused before it costs a session check or a query).
 */
let app: TestApp

beforeAll(async () => {
  app = await startTestApp({ dashboardRateLimitPerMinute: 3, dashboardAddressRateLimitPerMinute: 5, trustedProxies: ["127.0.0.1"], rateLimitStoreTimeoutMs: 30_000 })
})
afterAll(async () => {
  await app?.close()
})

const from = (address: string, headers: Record<string, string> = {}) => ({ headers: { "x-forwarded-for": address, ...headers } })

const expectLimited = (answer: Answer) => {
  expect(answer.status).toBe(429)
  expect(answer.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
  const retryAfter = Number(answer.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThan(0)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(answer.body.error).toContain(`Retry after ${retryAfter} seconds`)
}

describe("dashboard and key routes", () => {
  it("are limited per account, across client addresses and routes", async () => {
    const merchant = await app.createMerchant()
    const other = await app.createMerchant()
    expect((await merchant.dashboard("/api/dashboard/invoices", from("198.51.100.20"))).status).toBe(200)
    expect((await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`, from("198.51.100.21"))).status).toBe(200)
    expect((await merchant.dashboard(`/api/dev/invoices/${crypto.randomUUID()}/simulate-expiry`, { method: "POST", body: {}, ...from("198.51.100.22") })).status).toBe(404)
    expectLimited(await merchant.dashboard("/api/dashboard/invoices", from("198.51.100.23")))
    expectLimited(await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`, from("198.51.100.24")))
    expect((await other.dashboard("/api/dashboard/invoices", from("198.51.100.23"))).status).toBe(200)
  })

  it("are limited per client address, before and without authentication", async () => {
    const address = "198.51.100.30"
    const path = "/api/dashboard/invoices/not-an-id"
    const anonymous = () => publicRequest(app.baseUrl, path, from(address))
    const forged = () => publicRequest(app.baseUrl, path, from(address, { authorization: "Bearer forged.token.value" }))
    expect((await anonymous()).status).toBe(401)
    expect((await forged()).status).toBe(401)
    expect((await anonymous()).status).toBe(401)
    expect((await forged()).status).toBe(401)
    expect((await publicRequest(app.baseUrl, path, from(address, { "x-api-key": "svc_live_whatever" }))).status).toBe(403)
    expectLimited(await anonymous())
    // A valid session from the flooding address is refused too; another address is not.
    const merchant = await app.createMerchant()
    expectLimited(await merchant.dashboard("/api/dashboard/invoices", from(address)))
    expect((await merchant.dashboard("/api/dashboard/invoices", from("198.51.100.31"))).status).toBe(200)
    expect((await anonymous()).status).toBe(429)
    expect((await publicRequest(app.baseUrl, path, from("198.51.100.32"))).status).toBe(401)
  })
})
