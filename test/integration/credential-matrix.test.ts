import { Effect } from "effect"
import { SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { Accounts } from "../../src/accounts/Accounts.ts"
import { publicRequest, startTestApp, type TestApp, type TestMerchant } from "../support/TestApp.ts"

let app: TestApp
let owner: TestMerchant
let stranger: TestMerchant
let invoiceId: string
let revokedKey: string
let expiredToken: string
let foreignSecretToken: string
let unsignedToken: string

beforeAll(async () => {
  app = await startTestApp()
  owner = await app.createMerchant()
  stranger = await app.createMerchant()
  invoiceId = (await owner.api("/api/checkout/invoices", { body: { amountUsd: 3 } })).body.id
  const created = await app.run(Effect.flatMap(Accounts, (accounts) => Effect.orDie(accounts.createApiKey(owner.merchantId, "to revoke"))))
  await app.run(Effect.flatMap(Accounts, (accounts) => Effect.orDie(accounts.revokeApiKey(owner.merchantId, created.id))))
  revokedKey = created.rawKey
  const claims = JSON.parse(Buffer.from(owner.sessionToken.split(".")[1], "base64url").toString())
  foreignSecretToken = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode("another secret of 32+ characters!!"))
  const [header, , signature] = owner.sessionToken.split(".")
  expiredToken = `${header}.${Buffer.from(JSON.stringify({ ...claims, exp: claims.iat - 1 })).toString("base64url")}.${signature}`
  unsignedToken = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${owner.sessionToken.split(".")[1]}.`
})
afterAll(async () => {
  await app?.close()
})

type Credential = "none" | "basic" | "bad key" | "revoked key" | "other account key" | "session cookie" | "bearer" | "expired JWT" | "foreign-secret JWT" | "alg none JWT"

const headersFor = (credential: Credential): Record<string, string> => {
  switch (credential) {
    case "none":
      return {}
    case "basic":
      return { authorization: `Basic ${Buffer.from("merchant:password").toString("base64")}` }
    case "bad key":
      return { "x-api-key": "svc_live_" + "Z".repeat(43) }
    case "revoked key":
      return { "x-api-key": revokedKey }
    case "other account key":
      return { "x-api-key": stranger.apiKey }
    case "session cookie":
      return { cookie: `checkout_session=${owner.sessionToken}`, "x-csrf-token": owner.csrfToken }
    case "bearer":
      return { authorization: `Bearer ${owner.sessionToken}` }
    case "expired JWT":
      return { authorization: `Bearer ${expiredToken}` }
    case "foreign-secret JWT":
      return { authorization: `Bearer ${foreignSecretToken}` }
    case "alg none JWT":
      return { authorization: `Bearer ${unsignedToken}` }
  }
}

interface Route {
  readonly name: string
  readonly method: string
  readonly path: () => string
  readonly body?: unknown
  /** The answer for the owner's own valid credential of each kind. */
  readonly ownKey: number
  readonly ownSession: number
}

const routes: ReadonlyArray<Route> = [
  { name: "create", method: "POST", path: () => "/api/checkout/invoices", body: { amountUsd: 1 }, ownKey: 201, ownSession: 201 },
  { name: "detail", method: "GET", path: () => `/api/checkout/invoices/${invoiceId}`, ownKey: 200, ownSession: 200 },
  { name: "status", method: "GET", path: () => `/api/checkout/invoices/${invoiceId}/status`, ownKey: 200, ownSession: 200 },
  { name: "void (unknown invoice)", method: "POST", path: () => `/api/checkout/invoices/${crypto.randomUUID()}/void`, body: {}, ownKey: 404, ownSession: 404 },
  { name: "record-payment (unknown invoice)", method: "POST", path: () => `/api/checkout/invoices/${crypto.randomUUID()}/record-payment`, body: { note: "x" }, ownKey: 404,
    ownSession: 404 },
  { name: "list keys", method: "GET", path: () => `/api/users/${owner.merchantId}/checkout-api-keys`, ownKey: 403, ownSession: 200 },
  { name: "settings", method: "GET", path: () => "/api/dashboard/checkout-settings", ownKey: 403, ownSession: 200 },
  { name: "close exception", method: "POST", path: () => `/api/dashboard/invoices/${invoiceId}/exception/close`, body: { action: "close_unpaid", note: "n" }, ownKey: 403,
    ownSession: 409 }
]

const call = (route: Route, credential: Credential) =>
  publicRequest(app.baseUrl, route.path(), {
    method: route.method,
    headers: { ...(route.body === undefined ? {} : { "content-type": "application/json" }), ...headersFor(credential) },
    ...(route.body === undefined ? {} : { body: JSON.stringify(route.body) })
  })

describe("every authenticated route against every kind of credential", () => {
  for (const route of routes) {
    it(route.name, async () => {
      const keyRoute = route.ownKey !== 403
      const expectations: Array<[Credential, number, string | undefined]> = [
        ["none", 401, "Missing API key or session"],
        ["basic", 401, "Missing API key or session"],
        ["bad key", keyRoute ? 401 : 403, keyRoute ? "Invalid API key" : undefined],
        ["revoked key", keyRoute ? 401 : 403, keyRoute ? "Invalid API key" : undefined],
        ["session cookie", route.ownSession, undefined],
        ["bearer", route.ownSession, undefined],
        ["expired JWT", 401, "Invalid or expired session"],
        ["foreign-secret JWT", 401, "Invalid or expired session"],
        ["alg none JWT", 401, "Invalid or expired session"]
      ]
      for (const [credential, status, error] of expectations) {
        const response = await call(route, credential)
        expect(response.status, `${route.name} with ${credential}`).toBe(status)
        if (error !== undefined) expect(response.body, `${route.name} with ${credential}`).toEqual({ error })
      }
      const other = await call(route, "other account key")
      const expectedForOther = !keyRoute ? 403 : route.name === "create" ? 201 : 404
      expect(other.status, `${route.name} with another account's key`).toBe(expectedForOther)
    })
  }
})
