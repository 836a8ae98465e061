import fc from "fast-check"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

/**
 * Any text in any path parameter of any route, sent with a valid credential of that route, never
 * gets a 5xx, and never makes the service unavailable for others: the public status of an existing
 * invoice still answers 200 right after. Routes come from the service's own OpenAPI document, so a
 * new route is covered without touching this file.
 */

interface Route {
  readonly method: string
  readonly path: string
  readonly params: ReadonlyArray<string>
  readonly credentials: ReadonlyArray<"apiKey" | "bearer" | "none">
}

const NIL_UUID = "00000000-0000-0000-0000-000000000000"

const hostileText = fc.oneof(
  fc.constantFrom(
    "abc",
    "1 OR 1=1",
    "' OR '1'='1",
    NIL_UUID,
    "-1",
    "0",
    "99999999999999999999",
    "%",
    "%E0%A4%A",
    "%00",
    "%ZZ",
    "%C0%AF",
    "%2e%2e",
    "a".repeat(101),
    "1".repeat(5000),
    `${crypto.randomUUID()}x`,
    crypto.randomUUID().toUpperCase(),
    "{id}",
    "\u{1F600}",
    "\uFFFD"
  ),
  fc.string({ unit: "grapheme", maxLength: 64 }),
  fc.string({ unit: "binary", maxLength: 64 }),
  fc.string({ maxLength: 300 }),
  fc.uuid().map((uuid) => uuid.replace(/-/g, "")),
  fc.integer().map(String)
)

/** Percent-encoded as a client would, or raw (only URL-safe characters kept as they are, `%` too). */
const asSegment = (text: string, raw: boolean) =>
  raw ? text.replace(/[^A-Za-z0-9%._~-]/gu, (char) => encodeURIComponent(char.isWellFormed() ? char : "\uFFFD")) : encodeURIComponent(text.toWellFormed())

describe("path parameters (properties)", () => {
  let app: TestApp
  let merchant: TestMerchant
  let invoiceId: string
  let keyId: string
  let routes: ReadonlyArray<Route>

  beforeAll(async () => {
    app = await startTestApp()
    merchant = await app.createMerchant()
    invoiceId = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "T" } })).body.id
    keyId = (await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`)).body.keys[0].id
    const document = (await publicRequest(app.baseUrl, "/api/openapi.json")).body
    routes = Object.entries(document.paths as Record<string, Record<string, { security?: Array<Record<string, unknown>> }>>).flatMap(([path, operations]) =>
      Object.entries(operations).map(([method, operation]) => ({
        method: method.toUpperCase(),
        path,
        params: [...path.matchAll(/\{(\w+)\}/g)].map((match) => match[1]),
        credentials: (operation.security ?? []).length === 0
          ? ["none" as const]
          : (operation.security ?? []).flatMap((scheme) => Object.keys(scheme)).flatMap((name) =>
            name === "apiKey" ? ["apiKey" as const] : name === "bearer" ? ["bearer" as const] : []
          )
      }))
    ).filter((route) => route.params.length > 0)
  })
  afterAll(async () => {
    await app?.close()
  })

  /** The value a parameter takes when it is not the one under test: one the route accepts. */
  const validValue = (path: string, param: string) => param === "keyId" ? keyId : path.startsWith("/api/users/") ? merchant.merchantId : invoiceId

  it("covers the routes of the OpenAPI document, path parameters included", () => {
    expect(routes.map((route) => `${route.method} ${route.path}`)).toEqual(expect.arrayContaining([
      "DELETE /api/users/{id}/checkout-api-key/{keyId}",
      "GET /api/users/{id}/checkout-api-keys",
      "POST /api/dashboard/webhook-deliveries/{id}/redeliver",
      "GET /api/checkout/pay/{id}/status",
      "GET /api/checkout/invoices/{id}"
    ]))
  })

  it("no 5xx for any text in any path parameter, and the service stays available", async () => {
    const cases = fc.nat().chain((index) => {
      const route = routes[index % routes.length]
      return fc.record({
        route: fc.constant(route),
        param: fc.constantFrom(...route.params),
        credential: fc.constantFrom(...route.credentials),
        text: hostileText,
        raw: fc.boolean()
      })
    })
    await fc.assert(
      fc.asyncProperty(cases, async ({ route, param, credential, text, raw }) => {
        const path = route.path.replace(/\{(\w+)\}/g, (_, name: string) => name === param ? asSegment(text, raw) : validValue(route.path, name))
        const headers: Record<string, string> = credential === "apiKey"
          ? { "x-api-key": merchant.apiKey }
          : credential === "bearer"
          ? { authorization: `Bearer ${merchant.sessionToken}` }
          : {}
        const hasBody = route.method !== "GET" && route.method !== "HEAD"
        const answer = await publicRequest(app.baseUrl, path, {
          method: route.method,
          headers: hasBody ? { ...headers, "content-type": "application/json" } : headers,
          body: hasBody ? "{}" : undefined
        })
        expect(answer.status, `${route.method} ${path} -> ${answer.status} ${JSON.stringify(answer.body)}`).toBeLessThan(500)
        const status = await publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/status`)
        expect(status.status, `public status after ${route.method} ${path}: ${JSON.stringify(status.body)}`).toBe(200)
      }),
      { numRuns: 250 }
    )
    // The credentials used are still good: no probe was counted against the account.
    expect((await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`)).status).toBe(200)
  }, 120_000)
})
