import { afterAll, beforeAll, describe, expect, it } from "vitest"
import { publicRequest, startTestApp, type TestApp } from "../support/TestApp.ts"

/** Logging out with the session cookie is a cookie-authenticated write: it needs the CSRF token. */

let app: TestApp

beforeAll(async () => {
  app = await startTestApp()
})
afterAll(async () => {
  await app?.close()
})

const CSRF_MESSAGE = "Missing or invalid CSRF token: send the checkout_csrf cookie's value in X-CSRF-Token"

const signUp = async () => {
  const response = await publicRequest(app.baseUrl, "/api/auth/signup", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `${crypto.randomUUID()}@example.com`, password: "correct horse battery" })
  })
  expect(response.status).toBe(201)
  const cookies = response.headers.getSetCookie().join("\n")
  const session = /checkout_session=([^;]+)/.exec(cookies)![1]
  const csrf = /checkout_csrf=([^;]+)/.exec(cookies)![1]
  return { userId: response.body.user.id as string, token: response.body.token as string, cookie: `checkout_session=${session}; checkout_csrf=${csrf}`, csrf }
}

const logout = (headers: Record<string, string>) => publicRequest(app.baseUrl, "/api/auth/logout", { method: "POST", headers })
const sessionWorks = async (headers: Record<string, string>, userId: string) =>
  (await publicRequest(app.baseUrl, `/api/users/${userId}/checkout-api-keys`, { headers })).status === 200

describe("logout", () => {
  it("with the cookie and no or a wrong CSRF token: 403, and the session stays", async () => {
    const user = await signUp()
    expect(await logout({ cookie: user.cookie })).toMatchObject({ status: 403, body: { error: CSRF_MESSAGE } })
    expect(await logout({ cookie: user.cookie, "x-csrf-token": "forged" })).toMatchObject({ status: 403, body: { error: CSRF_MESSAGE } })
    expect(await sessionWorks({ cookie: user.cookie }, user.userId)).toBe(true)
  })

  it("with the cookie and its CSRF token: 204, the session revoked and the cookies expired", async () => {
    const user = await signUp()
    const answer = await logout({ cookie: user.cookie, "x-csrf-token": decodeURIComponent(user.csrf) })
    expect(answer.status).toBe(204)
    expect(answer.headers.getSetCookie().join("\n")).toMatch(/checkout_session=;/)
    expect(await sessionWorks({ cookie: user.cookie }, user.userId)).toBe(false)
  })

  it("with a bearer token: no CSRF token needed", async () => {
    const user = await signUp()
    expect((await logout({ authorization: `Bearer ${user.token}` })).status).toBe(204)
    expect(await sessionWorks({ authorization: `Bearer ${user.token}` }, user.userId)).toBe(false)
  })
})
