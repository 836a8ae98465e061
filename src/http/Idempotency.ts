import { sha256 } from "@noble/hashes/sha2.js"
import { bytesToHex } from "@noble/hashes/utils.js"
import { Clock, Effect, Schema, type SchemaAST } from "effect"
import { HttpEffect, HttpServerResponse } from "effect/http"
import { type ApiError, RequestErrors, statusOf } from "./ApiErrors.ts"
import { CurrentMerchant } from "./CurrentMerchant.ts"
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

/** What the replay reads of an endpoint (a handler's `request.endpoint`): its name, and the success and error codecs it answers with. */
export interface IdempotentEndpoint<A> {
  readonly identifier: string
  readonly success: ReadonlySet<Schema.Top>
  readonly error: ReadonlySet<Schema.Top>
  readonly "~Success": { readonly Type: A }
}

/** The parts of a handler's request an `Idempotency-Key` claim is made of. */
export interface IdempotentRequest<A> {
  readonly endpoint: IdempotentEndpoint<A>
  readonly params?: { readonly [name: string]: string } | undefined
  readonly headers: { readonly "idempotency-key"?: string | undefined }
  /** An omitted body (null) is the empty object: the same idempotent request either way. */
  readonly payload?: unknown
}

/** The `httpApiStatus` a schema carries (HttpApiSchema.status on a success, the class annotation on an error). */
const annotatedStatus = (ast: SchemaAST.AST): number | undefined => {
  const checked = ast.checks?.findLast((check) => check.annotations !== undefined && "httpApiStatus" in check.annotations)
  const status = checked?.annotations?.httpApiStatus ?? ast.annotations?.httpApiStatus ?? ast.context?.annotations?.httpApiStatus
  return typeof status === "number" ? status : undefined
}

interface Codec {
  readonly encode: (value: unknown) => Effect.Effect<string>
  readonly decode: (body: string) => Effect.Effect<unknown>
}
const codecOf = (schema: Schema.Top): Codec => {
  const codec = schema as unknown as Schema.Codec<unknown, unknown>
  const encode = Schema.encodeUnknownEffect(codec)
  const decode = Schema.decodeUnknownEffect(codec)
  return {
    encode: (value) => Effect.orDie(Effect.map(encode(value), (encoded) => JSON.stringify(encoded))),
    decode: (body) => Effect.orDie(Effect.flatMap(Effect.try(() => JSON.parse(body) as unknown), decode))
  }
}

/** An endpoint's answers by status: its success schema and its declared errors' (the ones HttpApi encodes its answers with). */
const answersOf = (endpoint: IdempotentEndpoint<unknown>): ReadonlyMap<number, Codec> =>
  new Map([
    ...[...endpoint.success].map((schema) => [annotatedStatus(schema.ast) ?? 200, codecOf(schema)] as const),
    ...[...endpoint.error].map((schema) => [annotatedStatus(schema.ast) ?? 500, codecOf(schema)] as const)
  ])
const answersCache = new WeakMap<object, ReadonlyMap<number, Codec>>()
const cachedAnswersOf = (endpoint: IdempotentEndpoint<unknown>) => {
  let answers = answersCache.get(endpoint)
  if (answers === undefined) answersCache.set(endpoint, answers = answersOf(endpoint))
  return answers
}

/**
 * A key's scope: the endpoint (its name, in kebab case) and its path parameters, e.g.
 * `record-payment:<invoice id>`; a test key's requests (livemode false) never replay a live key's
 * answers, nor the other way round.
 */
export const idempotencyScope = (endpoint: { readonly identifier: string }, params: IdempotentRequest<unknown>["params"], livemode: boolean) => {
  const scope = [endpoint.identifier.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`), ...Object.values(params ?? {})].join(":")
  return livemode ? scope : `test:${scope}`
}

/**
 * Runs a POST use case at most once per `Idempotency-Key` of the current merchant: the same key and
 * body replay the stored answer (success or 4xx) for the retention period; another body, or a request still
 * running, answers 409 (the latter with `Retry-After`); a 5xx, an error the endpoint does not
 * declare, or an interruption stores nothing, so a retry runs again.
 *
 * The stored answer is what the endpoint's schemas encode (its success, or the declared error of
 * that status), and a replay decodes it with the same schema: the endpoint answers it again as it
 * answered the first time, byte for byte.
 *
 * A running claim is a lease renewed every third of its length while the use case runs. When the
 * process dies, the lease runs out and a retry takes the claim over: if the dead run had already
 * committed its change (the repository marks the claim with the resource in the same statement),
 * `recover` answers with that resource; otherwise the use case runs again. Never twice.
 */
export const withIdempotency = <A, R, R2>(
  request: IdempotentRequest<A>,
  run: Effect.Effect<NoInfer<A>, ApiError, R>,
  recover: (resourceId: string) => Effect.Effect<NoInfer<A>, ApiError, R2>
): Effect.Effect<A, ApiError, R | R2 | IdempotencyStore | CurrentMerchant> =>
  Effect.gen(function*() {
    const key = request.headers["idempotency-key"]
    if (key === undefined) return yield* run
    if (key.length < 1 || key.length > 255) {
      return yield* RequestErrors.idempotencyKeyLength()
    }
    const { merchantId, livemode } = yield* CurrentMerchant
    const scope = idempotencyScope(request.endpoint, request.params, livemode)
    const answers = cachedAnswersOf(request.endpoint)
    const store = yield* IdempotencyStore
    const now = new Date(yield* Clock.currentTimeMillis)
    const begun = yield* store.begin(merchantId, scope, key, requestHash(request.payload ?? {}), now)
    // The answers the endpoint can give; anything else (a 5xx, an undeclared error) is not stored.
    const stored = (status: number, value: unknown) => {
      const codec = answers.get(status)
      return status >= 500 || codec === undefined
        ? store.release(merchantId, scope, key)
        : Effect.flatMap(codec.encode(value), (body) => store.complete(merchantId, scope, key, status, body))
    }
    const successStatus = [...answers.keys()].find((status) => status < 400) ?? 200
    const completed = (value: A) => stored(successStatus, value)
    switch (begun._tag) {
      case "Mismatch":
        return yield* RequestErrors.idempotencyKeyReused()
      case "InProgress":
        yield* answerRetryAfter(IN_PROGRESS_RETRY_AFTER_SECONDS)
        return yield* RequestErrors.idempotencyKeyInProgress()
      case "Replay":
        return yield* replay<A>(answers, begun.status, begun.body)
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
      Effect.tapError((error) => stored(statusOf(error), error)),
      Effect.onInterrupt(() => store.release(merchantId, scope, key)),
      Effect.tapDefect(() => store.release(merchantId, scope, key))
    )
  })

/**
 * The stored answer through the endpoint's schema of its status: the success value, or the error
 * (its class, so the endpoint answers its status again). A stored status the endpoint no longer
 * answers is a defect: replaying anything else would misreport what happened the first time.
 */
const replay = <A>(answers: ReadonlyMap<number, Codec>, status: number, body: string): Effect.Effect<A, ApiError> => {
  const codec = answers.get(status)
  if (codec === undefined) return Effect.die(new Error(`A stored idempotent answer has status ${status}, which the endpoint does not declare`))
  return Effect.flatMap(codec.decode(body), (value) => status < 400 ? Effect.succeed(value as A) : Effect.fail(value as ApiError))
}
