import { Duration, Effect, Layer, Option } from "effect"
import { HttpEffect, HttpServerRequest, HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { AppConfig } from "../config/AppConfig.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { AuthGroup, KeysGroup } from "./AccountsApi.ts"
import { AccountErrors } from "./AccountsApi.ts"
import { orTooManyRequests, clientAddress } from "../http/ApiErrors.ts"
import { RateLimits } from "./RateLimits.ts"
import { Accounts } from "./Accounts.ts"
import { MerchantId } from "../domain/Ids.ts"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { constantTimeEqual } from "./ApiKeyFormat.ts"
import { CSRF_COOKIE, CSRF_HEADER, SESSION_COOKIE, SESSION_HOURS, Sessions } from "./Sessions.ts"

const isLoopback = (host: string) => /^(127\.|localhost$|\[?::1\]?$)/.test(host)

const setSessionCookie = (token: string, csrfToken: string) =>
  Effect.gen(function*() {
    const { publicUrl, host } = yield* AppConfig
    const secure = new URL(publicUrl).protocol === "https:" || !isLoopback(host)
    yield* HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(
        HttpServerResponse.setCookieUnsafe(
          HttpServerResponse.setCookieUnsafe(response, SESSION_COOKIE, token, {
            httpOnly: true,
            sameSite: "lax",
            secure,
            path: "/",
            maxAge: Duration.hours(SESSION_HOURS)
          }),
          CSRF_COOKIE,
          csrfToken,
          { httpOnly: false, sameSite: "strict", secure, path: "/", maxAge: Duration.hours(SESSION_HOURS) }
        )
      )
    )
  })

/** Ends the session the request carries (cookie or bearer); a disabled account's session is just forgotten. */
const logout = (sessions: Sessions["Service"]) => () =>
  Effect.gen(function*() {
    const request = yield* HttpServerRequest.HttpServerRequest
    const header = request.headers["authorization"]
    const cookie = request.cookies[SESSION_COOKIE]
    const token = cookie ?? (header?.startsWith("Bearer ") ? header.slice(7).trim() : undefined)
    if (token === undefined) return yield* AccountErrors.missingCredential()
    const principal = yield* sessions.verify(token).pipe(
      Effect.catchTag("SessionAccountDisabled", () => Effect.succeed(undefined)),
      Effect.catchTag("SessionStatusUnavailable", () => Effect.fail(AccountErrors.statusUnavailable())),
      Effect.catchTag("InvalidSession", () => Effect.fail(AccountErrors.invalidSession()))
    )
    if (principal !== undefined) {
      // A cookie rides along on any cross-site form post: as for every cookie-authenticated
      // write, only the dashboard's own script (which alone reads the CSRF cookie) may log out.
      const sent = request.headers[CSRF_HEADER]
      if (cookie !== undefined && (sent === undefined || !constantTimeEqual(sent, sessions.csrfToken(principal.sessionId)))) {
        return yield* AccountErrors.csrfMismatch()
      }
      yield* sessions.revoke(principal.sessionId)
    }
    yield* HttpEffect.appendPreResponseHandler((_request, response) =>
      Effect.succeed(HttpServerResponse.expireCookieUnsafe(
        HttpServerResponse.expireCookieUnsafe(response, SESSION_COOKIE, { path: "/" }),
        CSRF_COOKIE,
        { path: "/" }
      ))
    )
  })

export const AuthHttpLive = HttpApiBuilder.group(checkoutApi(AuthGroup), "auth", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const sessions = yield* Sessions
    const rateLimits = yield* RateLimits
    const config = yield* AppConfig
    return handlers
      .handle("signup", ({ payload }) =>
        Effect.gen(function*() {
          if (config.signup === "closed") return yield* AccountErrors.signupClosed()
          yield* orTooManyRequests(rateLimits.signup(yield* clientAddress))
          const user = yield* orTooManyRequests(accounts.signUp(payload.email, payload.password)).pipe(
            Effect.catchTag("EmailTaken", () => Effect.fail(AccountErrors.emailTaken()))
          )
          const { token, sessionId } = yield* sessions.issue(user.id)
          yield* setSessionCookie(token, sessions.csrfToken(sessionId))
          return { user, token }
        }))
      .handle("login", ({ payload }) =>
        Effect.gen(function*() {
          yield* orTooManyRequests(rateLimits.loginFromAddress(yield* clientAddress))
          yield* orTooManyRequests(rateLimits.login(payload.email))
          const user = yield* orTooManyRequests(accounts.logIn(payload.email, payload.password)).pipe(
            Effect.catchTags({
              InvalidCredentials: () => Effect.fail(AccountErrors.invalidCredentials()),
              AccountDisabled: () => Effect.fail(AccountErrors.forbidden())
            })
          )
          const { token, sessionId } = yield* sessions.issue(user.id)
          yield* setSessionCookie(token, sessions.csrfToken(sessionId))
          return { user, token }
        }))
      .handle("logout", logout(sessions))
  })).pipe(Layer.provide([RateLimits.layer, Accounts.layer, Sessions.layer]))

/**
 * `:id` (a well-formed UUID: the schema answered 400 otherwise) must be the caller's own user id,
 * compared case-insensitively; another id answers 404. Only the id of another existing account is
 * recorded as a cross-account probe, and only when the credential proves intent: the nil UUID or an
 * id of nobody selects no one's data.
 */
const ownUser = (id: string) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    if (id.toLowerCase() === merchant.merchantId.toLowerCase()) return merchant
    const accounts = yield* Accounts
    if (merchant.credential !== "cookie" && Option.isSome(yield* accounts.findUser(MerchantId.make(id.toLowerCase())))) {
      yield* accounts.recordProbe(merchant.merchantId, "foreign_user_id", `user ${id}`)
    }
    return yield* AccountErrors.userNotFound()
  })

export const KeysHttpLive = HttpApiBuilder.group(checkoutApi(KeysGroup), "keys", (handlers) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    return handlers
      .handle("create", ({ params, payload }) =>
        Effect.gen(function*() {
          const merchant = yield* ownUser(params.id)
          const mode = payload?.mode ?? "live"
          return yield* accounts.createApiKey(merchant.merchantId, payload?.label ?? "", mode).pipe(
            Effect.catchTag("TooManyApiKeys", () => Effect.fail(AccountErrors.tooManyApiKeys(mode)))
          )
        }).pipe(Effect.provideService(Accounts, accounts)))
      .handle("list", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* ownUser(params.id)
          return { keys: yield* accounts.listApiKeys(merchant.merchantId) }
        }).pipe(Effect.provideService(Accounts, accounts)))
      .handle("revoke", ({ params }) =>
        Effect.gen(function*() {
          const merchant = yield* ownUser(params.id)
          yield* accounts.revokeApiKey(merchant.merchantId, params.keyId).pipe(
            Effect.catchTag("ApiKeyNotFound", () => Effect.fail(AccountErrors.apiKeyNotFound()))
          )
        }).pipe(Effect.provideService(Accounts, accounts)))
  })).pipe(Layer.provide(Accounts.layer))
