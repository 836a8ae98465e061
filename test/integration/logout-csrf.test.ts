import { describe, expect, it } from "@effect/vitest"
import { Effect } from "effect"
import { publicRequest, suiteOptions, testApp, TestServer } from "../support/TestApp.ts"

/** Logging out with the session cookie is a cookie-authenticated write: it needs the CSRF token. */

const CSRF_MESSAGE = "Missing or invalid CSRF token: send the checkout_csrf cookie's value in X-CSRF-Token"

const request = (path: string, init?: RequestInit) => Effect.flatMap(TestServer, ({ baseUrl }) => Effect.promise(() => publicRequest(baseUrl, path, init)))

const signUp = Effect.gen(function*() {
  const response = yield* request("/api/auth/signup", {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email: `${crypto.randomUUID()}@example.com`, password: "correct horse battery" })
  })
  expect(response.status).toBe(201)
  const cookies = response.headers.getSetCookie().join("\n")
  const session = /checkout_session=([^;]+)/.exec(cookies)![1]
  const csrf = /checkout_csrf=([^;]+)/.exec(cookies)![1]
  return { userId: response.body.user.id as string, token: response.body.token as string, cookie: `checkout_session=${session}; checkout_csrf=${csrf}`, csrf }
})

const logout = (headers: Record<string, string>) => request("/api/auth/logout", { method: "POST", headers })
const sessionWorks = (headers: Record<string, string>, userId: string) =>
  Effect.map(request(`/api/users/${userId}/checkout-api-keys`, { headers }), (answer) => answer.status === 200)

it.layer(testApp(), suiteOptions)((it) => {
  describe("logout", () => {
    it.effect("with the cookie and no or a wrong CSRF token: 403, and the session stays", () =>
      Effect.gen(function*() {
        const user = yield* signUp
        expect(yield* logout({ cookie: user.cookie })).toMatchObject({ status: 403, body: { error: CSRF_MESSAGE } })
        expect(yield* logout({ cookie: user.cookie, "x-csrf-token": "forged" })).toMatchObject({ status: 403, body: { error: CSRF_MESSAGE } })
        expect(yield* sessionWorks({ cookie: user.cookie }, user.userId)).toBe(true)
      }))

    it.effect("with the cookie and its CSRF token: 204, the session revoked and the cookies expired", () =>
      Effect.gen(function*() {
        const user = yield* signUp
        const answer = yield* logout({ cookie: user.cookie, "x-csrf-token": decodeURIComponent(user.csrf) })
        expect(answer.status).toBe(204)
        expect(answer.headers.getSetCookie().join("\n")).toMatch(/checkout_session=;/)
        expect(yield* sessionWorks({ cookie: user.cookie }, user.userId)).toBe(false)
      }))

    it.effect("with a bearer token: no CSRF token needed", () =>
      Effect.gen(function*() {
        const user = yield* signUp
        expect((yield* logout({ authorization: `Bearer ${user.token}` })).status).toBe(204)
        expect(yield* sessionWorks({ authorization: `Bearer ${user.token}` }, user.userId)).toBe(false)
      }))
  })
})
