import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"

/**
 * Path parameters the database types (uuid) are validated at the edge: a malformed one is a 400
 * that never reaches PostgreSQL (where `abc` as a uuid failed the statement and the failure was
 * taken for "database down", answering 503 everywhere), and it is not a cross-account probe.
 */

const THRESHOLD = 3
let app: TestApp

beforeAll(async () => {
  app = await startTestApp({ probeThreshold: THRESHOLD })
})
afterAll(async () => {
  await app?.close()
})

const signUp = async () => {
  const email = `${crypto.randomUUID()}@example.com`
  const response = await publicRequest(app.baseUrl, "/api/auth/signup", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password: "correct horse battery" })
  })
  expect(response.status).toBe(201)
  const token = response.body.token as string
  const userId = response.body.user.id as string
  const send = (method: string, path: string) => publicRequest(app.baseUrl, path, { method, headers: { authorization: `Bearer ${token}` } })
  return { email, userId, token, send }
}

describe("path parameters validated at the edge", () => {
  it("answers 400 for a malformed key id and keeps serving everyone", async () => {
    const owner = await app.createMerchant()
    const invoiceId = (await owner.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "T" } })).body.id
    const user = await signUp()
    for (let i = 0; i < 5; i++) {
      expect(await user.send("DELETE", `/api/users/${user.userId}/checkout-api-key/abc`)).toMatchObject({
        status: 400,
        body: { error: "keyId must be a valid UUID" }
      })
    }
    expect((await publicRequest(app.baseUrl, `/api/checkout/pay/${invoiceId}/status`)).status).toBe(200)
    expect((await publicRequest(app.baseUrl, "/api/health/ready")).status).toBe(200)
    expect((await owner.api("/api/checkout/invoices", { body: { amountUsd: 5, productName: "T" } })).status).toBe(201)
    expect(await user.send("DELETE", `/api/users/${user.userId}/checkout-api-key/${crypto.randomUUID()}`)).toMatchObject({
      status: 404,
      body: { error: "API key not found" }
    })
  })

  it("answers 400 for a malformed webhook delivery id", async () => {
    const user = await signUp()
    for (const id of ["abc", "1%20OR%201%3D1", "12345"]) {
      expect(await user.send("POST", `/api/dashboard/webhook-deliveries/${id}/redeliver`)).toMatchObject({
        status: 400,
        body: { error: "id must be a valid UUID" }
      })
    }
  })
})

describe("query fields validated at the edge", () => {
  const cursor = (text: string) => Buffer.from(text).toString("base64url")

  it("answers 400 for instants PostgreSQL cannot hold, in filters and in cursors", async () => {
    const user = await signUp()
    for (const value of ["-271821-04-20T00:00:00Z", "0000-01-01", "%2B275760-09-13T00:00:00Z"]) {
      for (const path of ["/api/dashboard/invoices", "/api/dashboard/exports/invoices.csv"]) {
        expect(await user.send("GET", `${path}?createdFrom=${value}`)).toMatchObject({ status: 400, body: { error: "createdFrom must be an ISO 8601 date or time" } })
        expect(await user.send("GET", `${path}?createdTo=${value}`)).toMatchObject({ status: 400, body: { error: "createdTo must be an ISO 8601 date or time" } })
      }
    }
    const id = crypto.randomUUID()
    for (const position of ["-271821-04-20T00:00:00.000Z", "0000-01-01T00:00:00.000Z", "+275760-09-13T00:00:00.000Z"]) {
      expect((await user.send("GET", `/api/dashboard/invoices?cursor=${cursor(`${position}|${id}`)}`)).status).toBe(400)
      expect((await user.send("GET", `/api/dashboard/webhook-deliveries?cursor=${cursor(`${position}|${id}`)}`)).status).toBe(400)
    }
    for (const position of ["0000-01-01T00:00:00.000000Z", "2024-02-30T00:00:00.000000Z"]) {
      expect((await user.send("GET", `/api/dashboard/unmatched-deposits?cursor=${cursor(`${position}|${id}`)}`)).status).toBe(400)
    }
    expect((await user.send("GET", "/api/dashboard/invoices?createdFrom=2024-01-01")).status).toBe(200)
    expect((await publicRequest(app.baseUrl, "/api/health/ready")).status).toBe(200)
  })
})

describe("cross-account probes", () => {
  it("a malformed user id is a 400, not a probe", async () => {
    const user = await signUp()
    for (let i = 0; i < THRESHOLD + 2; i++) {
      for (const id of ["abc", "1%20OR%201%3D1", "%27%20OR%20%271%27%3D%271"]) {
        expect(await user.send("GET", `/api/users/${id}/checkout-api-keys`)).toMatchObject({ status: 400, body: { error: "id must be a valid UUID" } })
      }
    }
    expect((await user.send("GET", `/api/users/${user.userId}/checkout-api-keys`)).status).toBe(200)
  })

  it("the nil UUID and an unknown well-formed id are 404s, not probes", async () => {
    const user = await signUp()
    for (let i = 0; i < THRESHOLD + 2; i++) {
      for (const id of ["00000000-0000-0000-0000-000000000000", crypto.randomUUID()]) {
        expect(await user.send("GET", `/api/users/${id}/checkout-api-keys`)).toMatchObject({ status: 404, body: { error: "User not found" } })
        expect((await user.send("DELETE", `/api/users/${id}/checkout-api-key/${crypto.randomUUID()}`)).status).toBe(404)
      }
    }
    expect((await user.send("GET", `/api/users/${user.userId}/checkout-api-keys`)).status).toBe(200)
  })

  it("another existing account's id is a probe, and enough of them disable the caller", async () => {
    const victim = await signUp()
    const prober = await signUp()
    for (let i = 0; i < THRESHOLD; i++) {
      expect((await prober.send("GET", `/api/users/${victim.userId}/checkout-api-keys`)).status).toBe(404)
    }
    expect((await prober.send("GET", `/api/users/${prober.userId}/checkout-api-keys`)).status).toBe(401)
    expect((await victim.send("GET", `/api/users/${victim.userId}/checkout-api-keys`)).status).toBe(200)
  })
})
