import { Effect } from "effect"
import { SqlClient } from "effect/sql"
import fc from "fast-check"
import { SignJWT } from "jose"
import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"

let app: TestApp

beforeAll(async () => {
  app = await startTestApp({ probeThreshold: 3 })
})
afterAll(async () => {
  await app?.close()
})

const json = (method: string, body?: unknown, headers: Record<string, string> = {}): RequestInit => ({
  method,
  headers: { ...(body === undefined ? {} : { "content-type": "application/json" }), ...headers },
  ...(body === undefined ? {} : { body: JSON.stringify(body) })
})

const signUp = async () => {
  const email = `${crypto.randomUUID()}@example.com`
  const response = await publicRequest(app.baseUrl, "/api/auth/signup", json("POST", { email, password: "correct horse battery" }))
  expect(response.status).toBe(201)
  return { email, userId: response.body.user.id as string, token: response.body.token as string, cookie: response.headers.get("set-cookie") ?? "" }
}

const bearer = (token: string) => ({ authorization: `Bearer ${token}` })

describe("dashboard authentication", () => {
  it("signs up with a session cookie and a token, and refuses short passwords and duplicates", async () => {
    const { email, token, cookie, userId } = await signUp()
    expect(token.split(".")).toHaveLength(3)
    expect(cookie).toMatch(/^checkout_session=/)
    expect(cookie).toMatch(/HttpOnly/i)
    expect(cookie).toMatch(/SameSite=Lax/i)
    expect(userId).toMatch(/^[0-9a-f-]{36}$/)
    expect(await publicRequest(app.baseUrl, "/api/auth/signup", json("POST", { email, password: "another long password" }))).toMatchObject({ status: 409 })
    expect(await publicRequest(app.baseUrl, "/api/auth/signup", json("POST", { email: "x@example.com", password: "short" }))).toMatchObject({
      status: 400,
      body: { error: "password must be at least 12 characters" }
    })
  })

  it("logs in, refuses a wrong password with the exact message, and logs out server-side", async () => {
    const { email } = await signUp()
    expect(await publicRequest(app.baseUrl, "/api/auth/login", json("POST", { email, password: "wrong password!!" }))).toMatchObject({
      status: 401,
      body: { error: "Invalid email or password" }
    })
    expect(await publicRequest(app.baseUrl, "/api/auth/login", json("POST", { email: "nobody@example.com", password: "whatever12345" }))).toMatchObject({
      status: 401,
      body: { error: "Invalid email or password" }
    })
    const login = await publicRequest(app.baseUrl, "/api/auth/login", json("POST", { email, password: "correct horse battery" }))
    expect(login.status).toBe(200)
    const token = login.body.token as string
    const userId = login.body.user.id as string
    expect((await publicRequest(app.baseUrl, `/api/users/${userId}/checkout-api-keys`, json("GET", undefined, bearer(token)))).status).toBe(200)
    expect((await publicRequest(app.baseUrl, "/api/auth/logout", json("POST", undefined, bearer(token)))).status).toBe(204)
    expect(await publicRequest(app.baseUrl, `/api/users/${userId}/checkout-api-keys`, json("GET", undefined, bearer(token)))).toMatchObject({
      status: 401,
      body: { error: "Invalid or expired session" }
    })
  })

  it("accepts the session cookie and refuses forged, expired and unsigned tokens", async () => {
    const { userId, token } = await signUp()
    const path = `/api/users/${userId}/checkout-api-keys`
    expect((await publicRequest(app.baseUrl, path, json("GET", undefined, { cookie: `checkout_session=${token}` }))).status).toBe(200)
    const [, payload] = token.split(".")
    const claims = JSON.parse(Buffer.from(payload, "base64url").toString())
    const forged = await new SignJWT(claims).setProtectedHeader({ alg: "HS256" }).sign(new TextEncoder().encode("x".repeat(32)))
    const unsigned = `${Buffer.from(JSON.stringify({ alg: "none", typ: "JWT" })).toString("base64url")}.${payload}.`
    const [header, , signature] = token.split(".")
    const expiredClaims = Buffer.from(JSON.stringify({ ...claims, exp: Math.floor(Date.now() / 1000) - 60 })).toString("base64url")
    const tampered = `${header}.${expiredClaims}.${signature}`
    for (const bad of [forged, unsigned, tampered, "not.a.jwt", ""]) {
      const response = await publicRequest(app.baseUrl, path, json("GET", undefined, bearer(bad)))
      expect(response.status, bad).toBe(401)
    }
    expect(await publicRequest(app.baseUrl, path)).toMatchObject({ status: 401, body: { error: "Missing API key or session" } })
  })

  it("checks the X-Api-Key header before the session", async () => {
    const { token } = await signUp()
    const response = await publicRequest(app.baseUrl, `/api/checkout/invoices/${crypto.randomUUID()}`, json("GET", undefined, {
      ...bearer(token),
      "x-api-key": "svc_live_" + "B".repeat(43)
    }))
    expect(response).toMatchObject({ status: 401, body: { error: "Invalid API key" } })
  })
})

describe("API key management", () => {
  it("creates keys shown once, lists prefixes only, limits to three and revokes at once", async () => {
    const { userId, token } = await signUp()
    const base = `/api/users/${userId}`
    const created = await publicRequest(app.baseUrl, `${base}/checkout-api-key`, json("POST", { label: "server" }, bearer(token)))
    expect(created.status).toBe(201)
    expect(created.body.rawKey).toMatch(/^svc_live_[A-Za-z0-9_-]{43}$/)
    expect(created.body.keyPrefix).toBe(created.body.rawKey.slice(0, 12))
    expect(created.body).toMatchObject({ label: "server" })
    expect(Object.keys(created.body).sort()).toEqual(["createdAt", "id", "keyPrefix", "label", "mode", "rawKey"])
    const unlabeled = await publicRequest(app.baseUrl, `${base}/checkout-api-key`, json("POST", {}, bearer(token)))
    expect(unlabeled.body.label).toBe("")
    await publicRequest(app.baseUrl, `${base}/checkout-api-key`, json("POST", { label: "third" }, bearer(token)))
    expect(await publicRequest(app.baseUrl, `${base}/checkout-api-key`, json("POST", { label: "fourth" }, bearer(token)))).toMatchObject({
      status: 409,
      body: { error: "At most 3 active API keys" }
    })
    const list = await publicRequest(app.baseUrl, `${base}/checkout-api-keys`, json("GET", undefined, bearer(token)))
    expect(list.body.keys).toHaveLength(3)
    expect(JSON.stringify(list.body)).not.toContain(created.body.rawKey)
    expect(Object.keys(list.body.keys[0]).sort()).toEqual(["createdAt", "id", "keyPrefix", "label", "mode"])

    const key = created.body.rawKey as string
    const viaKey = await publicRequest(app.baseUrl, `/api/checkout/invoices/${crypto.randomUUID()}`, json("GET", undefined, { "x-api-key": key }))
    expect(viaKey.status).toBe(404)
    expect(await publicRequest(app.baseUrl, `${base}/checkout-api-keys`, json("GET", undefined, { "x-api-key": key }))).toMatchObject({ status: 403 })

    const revoked = await publicRequest(app.baseUrl, `${base}/checkout-api-key/${created.body.id}`, json("DELETE", undefined, bearer(token)))
    expect(revoked.status).toBe(204)
    expect(await publicRequest(app.baseUrl, `/api/checkout/invoices/${crypto.randomUUID()}`, json("GET", undefined, { "x-api-key": key }))).toMatchObject({
      status: 401,
      body: { error: "Invalid API key" }
    })
    expect((await publicRequest(app.baseUrl, `${base}/checkout-api-key/${created.body.id}`, json("DELETE", undefined, bearer(token)))).status).toBe(404)
    expect((await publicRequest(app.baseUrl, `${base}/checkout-api-key`, json("POST", { label: "again" }, bearer(token)))).status).toBe(201)
  })

  it("takes a creation without a body (every field is optional), and refuses a label over 100 characters", async () => {
    const { userId, token } = await signUp()
    const base = `/api/users/${userId}`
    expect(await publicRequest(app.baseUrl, `${base}/checkout-api-key`, json("POST", undefined, bearer(token)))).toMatchObject({ status: 201, body: { label: "" } })
    expect(await publicRequest(app.baseUrl, `${base}/checkout-api-key`, json("POST", { label: "x".repeat(101) }, bearer(token)))).toMatchObject({
      status: 400,
      body: { error: "label must be at most 100 characters" }
    })
  })

  it("answers 404 for another user's id, refuses userId query fields, and disables a prober at the threshold", async () => {
    const victim = await signUp()
    const prober = await signUp()
    const foreign = await publicRequest(app.baseUrl, `/api/users/${victim.userId}/checkout-api-keys`, json("GET", undefined, bearer(prober.token)))
    expect(foreign.status).toBe(404)
    const query = await publicRequest(app.baseUrl, `/api/users/${prober.userId}/checkout-api-keys?userId=${victim.userId}`, json("GET", undefined, bearer(prober.token)))
    expect(query.status).toBe(400)
    expect(query.body.error).toMatch(/userId/)
    await publicRequest(app.baseUrl, `/api/users/${victim.userId}/checkout-api-keys`, json("GET", undefined, bearer(prober.token)))
    const after = await publicRequest(app.baseUrl, `/api/users/${prober.userId}/checkout-api-keys`, json("GET", undefined, bearer(prober.token)))
    expect(after.status).toBe(401)
    const login = await publicRequest(app.baseUrl, "/api/auth/login", json("POST", { email: prober.email, password: "correct horse battery" }))
    expect(login).toMatchObject({ status: 403, body: { error: "Forbidden" } })
    expect((await publicRequest(app.baseUrl, `/api/users/${victim.userId}/checkout-api-keys`, json("GET", undefined, bearer(victim.token)))).status).toBe(200)
  })

  it("counts a stray userId query (own id, nobody's id, malformed, empty) as no probe; another existing account's id as one", async () => {
    const caller = await signUp()
    const victim = await signUp()
    const created = await publicRequest(app.baseUrl, `/api/users/${caller.userId}/checkout-api-key`, json("POST", { label: "k" }, bearer(caller.token)))
    const key = { "x-api-key": created.body.rawKey as string }
    const invoice = `/api/checkout/invoices/${crypto.randomUUID()}`
    const strays = [caller.userId, caller.userId.toUpperCase(), "zzz", "", "%ZZ", crypto.randomUUID(), "00000000-0000-0000-0000-000000000000"]
    for (const value of strays) {
      for (const field of ["userId", "user_id"]) {
        const answer = await publicRequest(app.baseUrl, `${invoice}?${field}=${value}`, json("GET", undefined, key))
        expect(answer.status, `${field}=${value}`).toBe(400)
      }
    }
    expect((await publicRequest(app.baseUrl, invoice, json("GET", undefined, key))).status).toBe(404)
    expect((await publicRequest(app.baseUrl, `/api/users/${caller.userId}/checkout-api-keys`, json("GET", undefined, bearer(caller.token)))).status).toBe(200)
    // Another existing account's id is a probe: three (this suite's threshold) disable the caller.
    for (let i = 0; i < 3; i++) await publicRequest(app.baseUrl, `${invoice}?userId=${victim.userId}`, json("GET", undefined, key))
    expect(await publicRequest(app.baseUrl, invoice, json("GET", undefined, key))).toMatchObject({ status: 403, body: { error: "Forbidden" } })
  })

  it("refuses cookie-authenticated writes without the session's CSRF token, and takes them with it", async () => {
    const response = await publicRequest(app.baseUrl, "/api/auth/signup", json("POST", { email: `${crypto.randomUUID()}@example.com`, password: "correct horse battery" }))
    const cookies = response.headers.getSetCookie()
    const session = /checkout_session=([^;]+)/.exec(cookies.join("\n"))?.[1]
    const csrf = /checkout_csrf=([^;]+)/.exec(cookies.join("\n"))?.[1]
    expect(cookies.find((cookie) => cookie.startsWith("checkout_csrf="))).not.toMatch(/HttpOnly/i)
    expect(session).toBeDefined()
    expect(csrf).toBeDefined()
    const path = `/api/users/${response.body.user.id}/checkout-api-key`
    const cookie = { cookie: `checkout_session=${session}; checkout_csrf=${csrf}` }
    expect(await publicRequest(app.baseUrl, path, json("POST", { label: "x" }, cookie))).toMatchObject({
      status: 403,
      body: { error: "Missing or invalid CSRF token: send the checkout_csrf cookie's value in X-CSRF-Token" }
    })
    expect((await publicRequest(app.baseUrl, path, json("POST", { label: "x" }, { ...cookie, "x-csrf-token": "forged" }))).status).toBe(403)
    expect((await publicRequest(app.baseUrl, path, json("POST", { label: "x" }, { ...cookie, "x-csrf-token": csrf! }))).status).toBe(201)
    // Reads with the cookie, and writes with the bearer token, need no CSRF token.
    expect((await publicRequest(app.baseUrl, `${path}s`, { headers: cookie })).status).toBe(200)
    expect((await publicRequest(app.baseUrl, path, json("POST", { label: "y" }, bearer(response.body.token)))).status).toBe(201)
  })

  it("cannot be locked out by cross-site GETs that carry only the session cookie, and takes its own id in upper case", async () => {
    const victim = await signUp()
    const other = await signUp()
    const cookie = { cookie: `checkout_session=${victim.token}` }
    // What any web page can make the victim's browser do (top-level GETs, SameSite=Lax cookie).
    for (let i = 0; i < 5; i++) {
      expect((await publicRequest(app.baseUrl, `/api/users/${victim.userId}/checkout-api-keys?userId=x`, { headers: cookie })).status).toBe(400)
      expect((await publicRequest(app.baseUrl, `/api/dashboard/webhook-settings?userId=x`, { headers: cookie })).status).toBe(400)
      expect((await publicRequest(app.baseUrl, `/api/users/${other.userId}/checkout-api-keys`, { headers: cookie })).status).toBe(404)
    }
    const ownUpper = await publicRequest(app.baseUrl, `/api/users/${victim.userId.toUpperCase()}/checkout-api-keys`, { headers: cookie })
    expect(ownUpper.status).toBe(200)
    expect((await publicRequest(app.baseUrl, `/api/users/${victim.userId}/checkout-api-keys`, { headers: cookie })).status).toBe(200)
    const login = await publicRequest(app.baseUrl, "/api/auth/login", json("POST", { email: victim.email, password: "correct horse battery" }))
    expect(login.status).toBe(200)
  })
})

describe("sign-up closed", () => {
  it("answers 403", async () => {
    const closed = await startTestApp({ signup: "closed" })
    try {
      const response = await publicRequest(closed.baseUrl, "/api/auth/signup", json("POST", { email: "a@example.com", password: "long enough password" }))
      expect(response).toMatchObject({ status: 403, body: { error: "Sign-up is closed" } })
    } finally {
      await closed.close()
    }
  })
})

describe("account lookups whose statement fails", () => {
  // Renaming the merchants table makes every account lookup fail its statement (42P01). That is no
  // unreachable database (test/faults/statement-error.test.ts cuts the connection for the 503):
  // each such request is a 500 of its own, and nothing else stops. Only on the embedded database:
  // a shared server is used by other suites at the same time.
  it.skipIf(process.env.DATABASE_URL !== undefined)("answer 500 for that request alone, and recover", async () => {
    const isolated = await startTestApp()
    try {
      const merchant = await isolated.createMerchant()
      const invoiceId = (await merchant.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "T" } })).body.id
      const rename = (from: string, to: string) => isolated.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql.unsafe(`ALTER TABLE ${from} RENAME TO ${to}`)))
      await rename("merchants", "merchants_unreachable")
      expect(await merchant.api(`/api/checkout/invoices/${crypto.randomUUID()}`)).toMatchObject({ status: 500, body: { error: "Internal server error" } })
      expect(await merchant.dashboard(`/api/users/${merchant.merchantId}/checkout-api-keys`)).toMatchObject({ status: 500, body: { error: "Internal server error" } })
      expect((await publicRequest(isolated.baseUrl, `/api/checkout/pay/${invoiceId}/status`)).status).toBe(200)
      await rename("merchants_unreachable", "merchants")
      expect((await merchant.api(`/api/checkout/invoices/${crypto.randomUUID()}`)).status).toBe(404)
    } finally {
      await isolated.close()
    }
  })
})

describe("API key properties", () => {
  it("random key strings never authenticate", async () => {
    const { Accounts } = await import("../../src/accounts/Accounts.ts")
    await fc.assert(
      fc.asyncProperty(
        fc.oneof(
          fc.string({ maxLength: 80 }),
          fc.string({ unit: fc.constantFrom(..."ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"), minLength: 43, maxLength: 43 })
            .map((tail) => `svc_live_${tail}`)
        ),
        async (candidate) => {
          const outcome = await app.run(Effect.flatMap(Accounts, (accounts) => Effect.flip(accounts.authenticateApiKey(candidate))))
          expect(outcome._tag).toBe("InvalidApiKey")
        }
      ),
      { numRuns: 150 }
    )
  })

  it("stores only hashes of keys", async () => {
    const { userId, token } = await signUp()
    const created = await publicRequest(app.baseUrl, `/api/users/${userId}/checkout-api-key`, json("POST", { label: "k" }, bearer(token)))
    const rows = await app.run(Effect.flatMap(SqlClient.SqlClient, (sql) => sql<Record<string, unknown>>`SELECT * FROM api_keys WHERE id = ${created.body.id}`))
    const stored = JSON.stringify(rows)
    expect(stored).not.toContain(created.body.rawKey)
    expect(stored).not.toContain(created.body.rawKey.slice(12))
    expect(stored).toMatch(/[0-9a-f]{64}/)
  })
})
