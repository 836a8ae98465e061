import { Redacted } from "effect"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { startTestApp, type TestApp } from "../support/TestApp.ts"

const TOKEN = "metrics-token-of-the-scraper"
let withToken: TestApp
let production: TestApp

beforeAll(async () => {
  withToken = await startTestApp({ metricsToken: Redacted.make(TOKEN) })
  production = await startTestApp({ env: "production" })
})
afterAll(async () => {
  await withToken?.close()
  await production?.close()
})

const scrape = (app: TestApp, authorization?: string) =>
  fetch(`${app.baseUrl}/metrics`, { headers: authorization === undefined ? {} : { authorization } }).then(async (response) => ({
    status: response.status,
    body: await response.text(),
    challenge: response.headers.get("www-authenticate")
  }))

describe("who may read /metrics", () => {
  it("with CHECKOUT_METRICS_TOKEN: only the bearer of the token", async () => {
    expect(await scrape(withToken)).toMatchObject({ status: 401, challenge: "Bearer", body: JSON.stringify({ error: "Missing or invalid metrics token" }) })
    expect((await scrape(withToken, `Bearer ${TOKEN}x`)).status).toBe(401)
    expect((await scrape(withToken, TOKEN)).status).toBe(401)
    const allowed = await scrape(withToken, `Bearer ${TOKEN}`)
    expect(allowed.status).toBe(200)
    expect(allowed.body).toContain("# TYPE http_requests_total counter")
  })

  it("in production without a token: not served on the public port", async () => {
    expect(await scrape(production)).toMatchObject({ status: 404, body: JSON.stringify({ error: "Not found" }) })
  })
})
