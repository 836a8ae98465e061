import { createHmac } from "node:crypto"
import { Clock, Context, Data, Effect, Layer, Option } from "effect"
import { statusUnavailableOrDie } from "../db/ConnectionFailure.ts"
import { MerchantId } from "../domain/Ids.ts"
import type { BillingStatus } from "./Merchant.ts"
import { Secrets } from "./Secrets.ts"
import { SessionsRepo } from "./SessionsRepo.ts"

export class InvalidSession extends Data.TaggedError("InvalidSession")<{}> {}
export class SessionAccountDisabled extends Data.TaggedError("SessionAccountDisabled")<{}> {}
export class SessionStatusUnavailable extends Data.TaggedError("SessionStatusUnavailable")<{}> {}

export const SESSION_COOKIE = "checkout_session"
/** Readable by the dashboard's script (not HttpOnly): the double-submit CSRF token of the session. */
export const CSRF_COOKIE = "checkout_csrf"
export const CSRF_HEADER = "x-csrf-token"
export const SESSION_HOURS = 12

export interface SessionPrincipal {
  readonly merchantId: MerchantId
  readonly sessionId: string
  readonly billingStatus: BillingStatus
}

/**
 * Dashboard sessions: HS256 JWTs (algorithm pinned, exp and iat required) naming a session row,
 * so that logout and account disabling revoke them server-side at once.
 */
export class Sessions extends Context.Service<Sessions, {
  readonly issue: (merchantId: MerchantId) => Effect.Effect<{ readonly token: string; readonly expiresAt: Date; readonly sessionId: string }>
  /**
   * The CSRF token of a session: an HMAC of its id, so nothing more is stored. Cookie-authenticated
   * writes must echo it in `X-CSRF-Token` (the dashboard reads it from the `checkout_csrf` cookie).
   */
  readonly csrfToken: (sessionId: string) => string
  readonly verify: (token: string) => Effect.Effect<SessionPrincipal, InvalidSession | SessionAccountDisabled | SessionStatusUnavailable>
  readonly revoke: (sessionId: string) => Effect.Effect<void>
  readonly revokeAll: (merchantId: MerchantId) => Effect.Effect<void>
}>()("Accounts/Sessions") {
  static readonly layer = Layer.effect(
    Sessions,
    Effect.gen(function*() {
      const repo = yield* SessionsRepo
      const { jwtSecret } = yield* Secrets
      // jose (about 9 MB resident) loads with the first dashboard session, not at start.
      const jose = yield* Effect.cached(Effect.promise(() => import("jose")))
      return {
        issue: Effect.fn("Sessions.issue")(function*(merchantId) {
          const now = new Date(yield* Clock.currentTimeMillis)
          const expiresAt = new Date(now.getTime() + SESSION_HOURS * 3_600_000)
          const sessionId = crypto.randomUUID()
          yield* repo.insert({ id: sessionId, merchantId, createdAt: now, expiresAt })
          const { SignJWT } = yield* jose
          const token = yield* Effect.promise(() =>
            new SignJWT({ sid: sessionId })
              .setProtectedHeader({ alg: "HS256", typ: "JWT" })
              .setSubject(merchantId)
              .setIssuedAt(Math.floor(now.getTime() / 1000))
              .setExpirationTime(Math.floor(expiresAt.getTime() / 1000))
              .sign(jwtSecret)
          )
          return { token, expiresAt, sessionId }
        }),
        csrfToken: (sessionId) => createHmac("sha256", jwtSecret).update(`csrf:${sessionId}`).digest("base64url"),
        verify: Effect.fn("Sessions.verify")(function*(token) {
          const now = yield* Clock.currentTimeMillis
          const { jwtVerify } = yield* jose
          const verified = yield* Effect.tryPromise({
            try: () =>
              jwtVerify(token, jwtSecret, {
                algorithms: ["HS256"],
                requiredClaims: ["exp", "iat", "sub"],
                currentDate: new Date(now)
              }),
            catch: () => new InvalidSession()
          })
          const sessionId = verified.payload.sid
          const subject = verified.payload.sub
          if (typeof sessionId !== "string" || typeof subject !== "string") return yield* new InvalidSession()
          const merchantId = MerchantId.make(subject)
          const found = yield* repo.findState(sessionId, merchantId).pipe(
            Effect.catchTag("SqlError", statusUnavailableOrDie(() => new SessionStatusUnavailable()))
          )
          if (Option.isNone(found) || found.value.revokedAt !== null || found.value.expiresAt.getTime() <= now) {
            return yield* new InvalidSession()
          }
          if (found.value.status !== "active") return yield* new SessionAccountDisabled()
          return { merchantId, sessionId, billingStatus: found.value.billingStatus }
        }),
        revoke: Effect.fn("Sessions.revoke")(function*(sessionId) {
          yield* repo.revoke(sessionId)
        }),
        revokeAll: Effect.fn("Sessions.revokeAll")(function*(merchantId) {
          yield* repo.revokeAll(merchantId)
        })
      }
    })
  ).pipe(Layer.provide([SessionsRepo.layer, Secrets.layer]))
}
