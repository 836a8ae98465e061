import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Clock, Effect } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { type ApiError, errorOfStatus, RequestErrors, statusOf } from "./ApiErrors.ts"
import { IdempotencyClaim } from "../db/IdempotencyClaim.ts"
import { IdempotencyStore } from "./IdempotencyStore.ts"

const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner)

/** A create or a void takes well under a second: the answer to the retry of one still running says to try again then. */
export const IN_PROGRESS_RETRY_AFTER_SECONDS = 1

/** `Retry-After` on the answer of the current request (nothing outside one, as in tests that call the use case). */
const answerRetryAfter = (seconds: number) =>
  Effect.flatMap(Effect.context<never>(), (context) =>
    Effect.sync(() =>
      HttpEffect.appendPreResponseHandlerUnsafe(context, (_request, response) =>
        Effect.succeed(HttpServerResponse.setHeader(response, "retry-after", String(seconds))))
    ))

export const requestHash = (payload: unknown): string => bytesToHex(sha256(new TextEncoder().encode(canonicalJson(payload))))

/**
 * Runs a POST use case at most once per `Idempotency-Key`: the same key and body replay the
 * stored outcome (success or 4xx) for the retention period; another body, or a request still
 * running, answers 409 (the latter with `Retry-After`); a 5xx or an interruption stores nothing, so a retry runs again.
 *
 * A running claim is a lease renewed every third of its length while the use case runs. When the
 * process dies, the lease runs out and a retry takes the claim over: if the dead run had already
 * committed its change (the repository marks the claim with the resource in the same statement),
 * `recover` answers with that resource; otherwise the use case runs again. Never twice.
 */
export const withIdempotency = <A, R, R2>(
  request: {
    readonly merchantId: string
    readonly scope: string
    readonly key: string | undefined
    readonly payload: unknown
    readonly successStatus: number
  },
  run: Effect.Effect<A, ApiError, R>,
  recover: (resourceId: string) => Effect.Effect<A, ApiError, R2>
): Effect.Effect<A, ApiError, R | R2 | IdempotencyStore> =>
  Effect.gen(function*() {
    const { key, merchantId, scope } = request
    if (key === undefined) return yield* run
    if (key.length < 1 || key.length > 255) {
      return yield* RequestErrors.idempotencyKeyLength()
    }
    const store = yield* IdempotencyStore
    const now = new Date(yield* Clock.currentTimeMillis)
    const begun = yield* store.begin(merchantId, scope, key, requestHash(request.payload), now)
    const completed = (value: A) => store.complete(merchantId, scope, key, request.successStatus, JSON.stringify(value))
    switch (begun._tag) {
      case "Mismatch":
        return yield* RequestErrors.idempotencyKeyReused()
      case "InProgress":
        yield* answerRetryAfter(IN_PROGRESS_RETRY_AFTER_SECONDS)
        return yield* RequestErrors.idempotencyKeyInProgress()
      case "Replay": {
        const body = JSON.parse(begun.body) as unknown
        if (begun.status < 400) return body as A
        return yield* errorOfStatus(begun.status, (body as { error: string }).error)
      }
      case "Recover":
        return yield* recover(begun.resourceId).pipe(Effect.tap(completed))
      case "Started":
        break
    }
    const renewal = Effect.sleep(Math.max(1, Math.floor(store.settings.leaseMs / 3))).pipe(
      Effect.andThen(Clock.currentTimeMillis),
      Effect.flatMap((at) => store.renew(merchantId, scope, key, new Date(at))),
      Effect.forever
    )
    return yield* Effect.scoped(Effect.gen(function*() {
      yield* Effect.forkScoped(renewal)
      return yield* run.pipe(Effect.provideService(IdempotencyClaim, { merchantId, scope, key }))
    })).pipe(
      Effect.tap(completed),
      Effect.tapError((error) => {
        const status = statusOf(error)
        return status >= 500
          ? store.release(merchantId, scope, key)
          : store.complete(merchantId, scope, key, status, JSON.stringify({ error: error.error }))
      }),
      Effect.onInterrupt(() => store.release(merchantId, scope, key)),
      Effect.tapDefect(() => store.release(merchantId, scope, key))
    )
  })
