import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { type Answer, publicRequest, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

/**
 * The dashboard API, the development simulator and the key routes are limited per account
 * (CHECKOUT_DASHBOARD_RATE_LIMIT) and per client address (CHECKOUT_DASHBOARD_ADDRESS_RATE_LIMIT,
 * counted before authentication, so that a flood of requests without a valid session, or with a
 * malformed id, is refused before it costs a session check or a query).
 */
const app = testApp({ dashboardRateLimitPerMinute: 3, dashboardAddressRateLimitPerMinute: 5, trustedProxies: ["127.0.0.1"], rateLimitStoreTimeoutMs: 30_000 })

const createMerchant = Effect.flatMap(TestServer, (server) => server.createMerchant())
const request = (path: string, init: RequestInit) => Effect.flatMap(TestServer, ({ baseUrl }) => Effect.promise(() => publicRequest(baseUrl, path, init)))

const from = (address: string, headers: Record<string, string> = {}) => ({ headers: { "x-forwarded-for": address, ...headers } })

const expectLimited = (answer: Answer) => {
  expect(answer.status).toBe(429)
  expect(answer.body.error).toMatch(/^Rate limit exceeded\. Retry after \d+ seconds\.$/)
  const retryAfter = Number(answer.headers.get("retry-after"))
  expect(retryAfter).toBeGreaterThan(0)
  expect(retryAfter).toBeLessThanOrEqual(60)
  expect(answer.body.error).toContain(`Retry after ${retryAfter} seconds`)
}

it.layer(app, suiteOptions)((it) => {
  describe("dashboard and key routes", () => {
    it.effect("are limited per account, across client addresses and routes", () =>
      Effect.gen(function*() {
        const merchant = yield* createMerchant
        const other = yield* createMerchant
        expect((yield* merchant.dashboard("/api/dashboard/invoices", from("198.51.100.20"))).status).toBe(200)
        expect((yield* merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`, from("198.51.100.21"))).status).toBe(200)
        expect((yield* merchant.dashboard(`/api/dev/invoices/${crypto.randomUUID()}/simulate-expiry`, { method: "POST", body: {}, ...from("198.51.100.22") })).status).toBe(404)
        expectLimited(yield* merchant.dashboard("/api/dashboard/invoices", from("198.51.100.23")))
        expectLimited(yield* merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`, from("198.51.100.24")))
        expect((yield* other.dashboard("/api/dashboard/invoices", from("198.51.100.23"))).status).toBe(200)
      }))

    it.effect("are limited per client address, before and without authentication", () =>
      Effect.gen(function*() {
        const address = "198.51.100.30"
        const path = "/api/dashboard/invoices/not-an-id"
        const anonymous = request(path, from(address))
        const forged = request(path, from(address, { authorization: "Bearer forged.token.value" }))
        expect((yield* anonymous).status).toBe(401)
        expect((yield* forged).status).toBe(401)
        expect((yield* anonymous).status).toBe(401)
        expect((yield* forged).status).toBe(401)
        expect((yield* request(path, from(address, { "x-api-key": "svc_live_whatever" }))).status).toBe(403)
        expectLimited(yield* anonymous)
        // A valid session from the flooding address is refused too; another address is not.
        const merchant = yield* createMerchant
        expectLimited(yield* merchant.dashboard("/api/dashboard/invoices", from(address)))
        expect((yield* merchant.dashboard("/api/dashboard/invoices", from("198.51.100.31"))).status).toBe(200)
        expect((yield* anonymous).status).toBe(429)
        expect((yield* request(path, from("198.51.100.32"))).status).toBe(401)
      }))
  })
})
