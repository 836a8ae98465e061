import { describe, expect, it } from "@effect/vitest"
import { Effect, Redacted } from "effect"
import { suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

const TOKEN = "metrics-token-of-the-scraper"

const scrape = (authorization?: string) =>
  Effect.flatMap(TestServer, ({ baseUrl }) =>
    Effect.promise(() =>
      fetch(`${baseUrl}/metrics`, { headers: authorization === undefined ? {} : { authorization } }).then(async (response) => ({
        status: response.status,
        body: await response.text(),
        challenge: response.headers.get("www-authenticate")
      }))
    ))

describe("who may read /metrics", () => {
  it.layer(testApp({ metricsToken: Redacted.make(TOKEN) }), suiteOptions)("with CHECKOUT_METRICS_TOKEN", (it) => {
    it.effect("only the bearer of the token", () =>
      Effect.gen(function*() {
        expect(yield* scrape()).toMatchObject({ status: 401, challenge: "Bearer", body: JSON.stringify({ error: "Missing or invalid metrics token" }) })
        expect((yield* scrape(`Bearer ${TOKEN}x`)).status).toBe(401)
        expect((yield* scrape(TOKEN)).status).toBe(401)
        const allowed = yield* scrape(`Bearer ${TOKEN}`)
        expect(allowed.status).toBe(200)
        expect(allowed.body).toContain("# TYPE http_requests_total counter")
      }))
  })

  it.layer(testApp({ env: "production" }), suiteOptions)("in production without a token", (it) => {
    it.effect("not served on the public port", () =>
      Effect.gen(function*() {
        expect(yield* scrape()).toMatchObject({ status: 404, body: JSON.stringify({ error: "Not found" }) })
      }))
  })
})
