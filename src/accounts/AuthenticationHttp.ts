import { Effect, Layer, Option } from "effect"
import { HttpServerRequest } from "effect/http"
import { Accounts } from "./Accounts.ts"
import { ApiKeyAdmission } from "./ApiKeyAdmission.ts"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { CSRF_HEADER, SESSION_COOKIE, Sessions } from "./Sessions.ts"
import { constantTimeEqual } from "./ApiKeyFormat.ts"
import { RateLimits } from "./RateLimits.ts"
import { DashboardAuthentication, MerchantAuthentication } from "../http/Authentication.ts"
import { clientAddress, orTooManyRequests, RequestErrors } from "../http/ApiErrors.ts"
import type { BadRequest } from "../http/ApiErrors.ts"
import { AccountErrors } from "./AccountsApi.ts"
import { MerchantId } from "../domain/Ids.ts"

const bearerOf = (request: HttpServerRequest.HttpServerRequest): string | undefined => {
  const header = request.headers["authorization"]
  // Another scheme (Basic, Digest, ...) carries no session: answered as no credentials at all.
  if (header === undefined || !/^Bearer(?:\s|$)/i.test(header)) return undefined
  const match = /^Bearer\s+(\S+)\s*$/i.exec(header)
  return match === null ? "" : match[1]
}

/** Reads the query string, if there is one, without building a URL. */
const queryOf = (request: HttpServerRequest.HttpServerRequest): URLSearchParams | undefined => {
  const start = request.url.indexOf("?")
  return start === -1 ? undefined : new URLSearchParams(request.url.slice(start + 1))
}

const selectsAnotherAccount = (request: HttpServerRequest.HttpServerRequest) => {
  const query = queryOf(request)
  return query !== undefined && (query.has("userId") || query.has("user_id"))
}

const WELL_FORMED_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i

/** The well-formed ids of other accounts that the query names (`zzz`, empty, or the caller's own id name nobody else). */
export const foreignIdsNamed = (query: URLSearchParams, ownId: string): ReadonlyArray<string> => {
  const named = [...query.getAll("userId"), ...query.getAll("user_id")].map((value) => value.toLowerCase())
  return [...new Set(named)].filter((id) => WELL_FORMED_ID.test(id) && id !== ownId.toLowerCase())
}

/** Whether the query names another account that exists: only that is a probe (a stray field is a mistake). */
const namesAnotherExistingAccount = (request: HttpServerRequest.HttpServerRequest, merchantId: MerchantId) =>
  Effect.gen(function*() {
    const accounts = yield* Accounts
    for (const id of foreignIdsNamed(queryOf(request) ?? new URLSearchParams(), merchantId)) {
      if (Option.isSome(yield* accounts.findUser(MerchantId.make(id)))) return true
    }
    return false
  })

const sessionErrors = {
  InvalidSession: () => Effect.fail(AccountErrors.invalidSession()),
  SessionAccountDisabled: () => Effect.fail(AccountErrors.forbidden()),
  SessionStatusUnavailable: () => Effect.fail(AccountErrors.statusUnavailable())
} as const

/** Cookie first, then bearer: the session part of the spec's authentication order. */
const sessionPrincipal = (request: HttpServerRequest.HttpServerRequest) =>
  Effect.gen(function*() {
    const sessions = yield* Sessions
    const cookie = request.cookies[SESSION_COOKIE]
    const token = cookie ?? bearerOf(request)
    if (token === undefined) return yield* AccountErrors.missingCredential()
    const principal = yield* sessions.verify(token).pipe(Effect.catchTags(sessionErrors))
    if (cookie !== undefined && !SAFE_METHODS.has(request.method)) {
      // A cookie rides along on any same-site request: a write must also prove it came from the
      // dashboard's own script, which alone can read the CSRF cookie.
      const sent = request.headers[CSRF_HEADER]
      if (sent === undefined || !constantTimeEqual(sent, sessions.csrfToken(principal.sessionId))) {
        return yield* AccountErrors.csrfMismatch()
      }
    }
    return { ...principal, credential: cookie === undefined ? "bearer" as const : "cookie" as const }
  })

const SAFE_METHODS = new Set(["GET", "HEAD", "OPTIONS"])

/**
 * A request that names another account is refused; it counts as a probe towards disabling the
 * account only when it names another existing account and its credential proves intent (see
 * CurrentMerchant.credential). The common
 * case, no such field, is answered without a generator of its own: one that closed over the request
 * on every authenticated request made each scavenge under load promote about one response per
 * request (docs/decisions.md, "Where the authenticated reads' promotion came from").
 */
const refuseAccountSelection = (
  request: HttpServerRequest.HttpServerRequest,
  merchantId: MerchantId,
  credential: CurrentMerchant["Service"]["credential"]
): Effect.Effect<void, BadRequest, Accounts> =>
  selectsAnotherAccount(request)
    ? Effect.gen(function*() {
      const accounts = yield* Accounts
      if (credential !== "cookie" && (yield* namesAnotherExistingAccount(request, merchantId))) {
        yield* accounts.recordProbe(merchantId, "query_user_id", `${request.method} ${request.url}`)
      }
      return yield* AccountErrors.accountSelected()
    })
    : Effect.void

/** The merchant endpoints' authentication (see MerchantAuthentication). */
export const MerchantAuthenticationLive = Layer.effect(
  MerchantAuthentication,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const sessions = yield* Sessions
    const rateLimits = yield* RateLimits
    const admission = yield* ApiKeyAdmission
    /** 100 requests per minute per merchant account (the "client" of the spec's limit). */
    const limit = (merchantId: MerchantId) => orTooManyRequests(rateLimits.api(merchantId))
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        const apiKey = request.headers["x-api-key"]
        if (apiKey !== undefined) {
          // A request that names another account is refused before it is counted: it only
          // authenticates (the probe is recorded against the key's account).
          const probing = selectsAnotherAccount(request)
          const merchant = yield* orTooManyRequests(probing ? accounts.authenticateApiKey(apiKey) : admission.admit(apiKey)).pipe(
            Effect.catchTags({
              InvalidApiKey: () => Effect.fail(AccountErrors.invalidApiKey()),
              AccountDisabled: () => Effect.fail(AccountErrors.forbidden()),
              AccountStatusUnavailable: () => Effect.fail(AccountErrors.statusUnavailable())
            })
          )
          if (probing) yield* refuseAccountSelection(request, merchant.merchantId, "api_key")
          return yield* Effect.provideService(httpEffect, CurrentMerchant, {
            ...merchant,
            via: "api_key",
            credential: "api_key",
            sessionId: undefined
          })
        }
        const principal = yield* sessionPrincipal(request).pipe(Effect.provideService(Sessions, sessions))
        yield* refuseAccountSelection(request, principal.merchantId, principal.credential)
        yield* limit(principal.merchantId)
        return yield* Effect.provideService(httpEffect, CurrentMerchant, { ...principal, via: "session", livemode: true })
      }).pipe(Effect.provideService(Accounts, accounts))
  })
).pipe(Layer.provide([RateLimits.layer, Accounts.layer, ApiKeyAdmission.layer, Sessions.layer]))

/** The dashboard routes' authentication (see DashboardAuthentication). */
export const DashboardAuthenticationLive = Layer.effect(
  DashboardAuthentication,
  Effect.gen(function*() {
    const accounts = yield* Accounts
    const sessions = yield* Sessions
    const rateLimits = yield* RateLimits
    return (httpEffect) =>
      Effect.gen(function*() {
        const request = yield* HttpServerRequest.HttpServerRequest
        yield* orTooManyRequests(rateLimits.dashboardFromAddress(yield* clientAddress))
        if (request.headers["x-api-key"] !== undefined) {
          return yield* RequestErrors.apiKeyOutsideCheckout()
        }
        const principal = yield* sessionPrincipal(request)
        yield* orTooManyRequests(rateLimits.dashboard(principal.merchantId))
        yield* refuseAccountSelection(request, principal.merchantId, principal.credential)
        return yield* Effect.provideService(httpEffect, CurrentMerchant, { ...principal, via: "session", livemode: true })
      }).pipe(Effect.provideService(Accounts, accounts), Effect.provideService(Sessions, sessions))
  })
).pipe(Layer.provide([RateLimits.layer, Accounts.layer, Sessions.layer]))
