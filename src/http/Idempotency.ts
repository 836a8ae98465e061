import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Clock, Effect } from "effect"
import {
  type ApiError,
  BadGateway,
  BadRequest,
  Conflict,
  Forbidden,
  NotFound,
  ServiceUnavailable,
  TooManyRequests,
  Unauthorized
} from "./ApiErrors.ts"
import { IdempotencyStore } from "./IdempotencyStore.ts"

const errorByStatus: Record<number, new(args: { error: string }) => ApiError> = {
  400: BadRequest,
  401: Unauthorized,
  403: Forbidden,
  404: NotFound,
  409: Conflict,
  429: TooManyRequests,
  502: BadGateway,
  503: ServiceUnavailable
}

const statusOf = (error: ApiError): number => {
  for (const [status, constructor] of Object.entries(errorByStatus)) if (error instanceof constructor) return Number(status)
  return 500
}

const canonicalJson = (value: unknown): string =>
  JSON.stringify(value, (_key, inner: unknown) =>
    inner !== null && typeof inner === "object" && !Array.isArray(inner)
      ? Object.fromEntries(Object.entries(inner).sort(([a], [b]) => a.localeCompare(b)))
      : inner)

export const requestHash = (payload: unknown): string => bytesToHex(sha256(new TextEncoder().encode(canonicalJson(payload))))

/**
 * Runs a POST use case at most once per `Idempotency-Key`: the same key and body replay the
 * stored outcome (success or 4xx) for the retention period; another body, or a request still
 * running, answers 409; a 5xx or a crash stores nothing, so a retry runs again.
 */
export const withIdempotency = <A, R>(
  request: {
    readonly merchantId: string
    readonly scope: string
    readonly key: string | undefined
    readonly payload: unknown
    readonly successStatus: number
  },
  run: Effect.Effect<A, ApiError, R>
): Effect.Effect<A, ApiError, R | IdempotencyStore> =>
  Effect.gen(function*() {
    const { key, merchantId, scope } = request
    if (key === undefined) return yield* run
    if (key.length < 1 || key.length > 255) {
      return yield* new BadRequest({ error: "Idempotency-Key must be 1 to 255 characters" })
    }
    const store = yield* IdempotencyStore
    const now = new Date(yield* Clock.currentTimeMillis)
    const begun = yield* store.begin(merchantId, scope, key, requestHash(request.payload), now)
    switch (begun._tag) {
      case "Mismatch":
        return yield* new Conflict({ error: "Idempotency-Key was already used with a different request body" })
      case "InProgress":
        return yield* new Conflict({ error: "A request with this Idempotency-Key is still in progress; retry shortly" })
      case "Replay": {
        const body = JSON.parse(begun.body) as unknown
        if (begun.status < 400) return body as A
        const ErrorClass = errorByStatus[begun.status] ?? Conflict
        return yield* new ErrorClass({ error: (body as { error: string }).error })
      }
      case "Started":
        break
    }
    return yield* run.pipe(
      Effect.tap((value) => store.complete(merchantId, scope, key, request.successStatus, JSON.stringify(value))),
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
