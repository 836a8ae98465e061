import { Clock, Duration, Effect, Layer, Schema } from "effect"
import { RateLimiter } from "effect/persistence"
import { SqlClient } from "effect/sql"
import { bigintColumn } from "../db/Columns.ts"

/** A `rate_limits` window after the upsert (migration 0003). */
const WindowRow = Schema.Struct({ count: Schema.Finite, expiresAtMs: bigintColumn(Schema.BigInt), lastExceeded: Schema.Boolean })
const decodeWindow = Schema.decodeUnknownEffect(Schema.Tuple([WindowRow]))

const storeError = (message: string) => (cause: unknown) => new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message, cause }) })

/**
 * A RateLimiterStore on the service's own database, so that every instance sharing it (and the
 * embedded PGlite) enforces one limit. Same fixed-window semantics as the library's memory and
 * Redis stores, in one atomic upsert: each token extends the window by `refillRate`; a request
 * over the limit is reported (`count > limit`) but not counted.
 */
export const layerStorePostgres = Layer.effect(
  RateLimiter.RateLimiterStore,
  Effect.gen(function*() {
    const sql = yield* SqlClient.SqlClient
    return RateLimiter.RateLimiterStore.of({
      fixedWindow: ({ key, tokens, refillRate, limit }) =>
        Effect.gen(function*() {
          const now = yield* Clock.currentTimeMillis
          const extension = Math.max(1, Math.ceil(Duration.toMillis(refillRate) * tokens))
          const cap = limit ?? null
          const rows = yield* sql`INSERT INTO rate_limits AS r (key, count, expires_at_ms, last_exceeded)
            VALUES (${key}, ${tokens}, ${now + extension}, false)
            ON CONFLICT (key) DO UPDATE SET
              count = CASE WHEN r.expires_at_ms <= ${now} THEN ${tokens}::double precision
                WHEN ${cap}::double precision IS NOT NULL AND r.count + ${tokens} > ${cap}::double precision THEN r.count
                ELSE r.count + ${tokens} END,
              expires_at_ms = CASE WHEN r.expires_at_ms <= ${now} THEN ${now + extension}::bigint
                WHEN ${cap}::double precision IS NOT NULL AND r.count + ${tokens} > ${cap}::double precision THEN r.expires_at_ms
                ELSE r.expires_at_ms + ${extension} END,
              last_exceeded = r.expires_at_ms > ${now} AND ${cap}::double precision IS NOT NULL
                AND r.count + ${tokens} > ${cap}::double precision
            RETURNING count, expires_at_ms, last_exceeded`.pipe(Effect.mapError(storeError("rate limit store unavailable")))
          const [{ count, expiresAtMs, lastExceeded }] = yield* decodeWindow(rows).pipe(Effect.orDie)
          const ttl = Math.max(0, Number(expiresAtMs) - now)
          return lastExceeded ? [count + tokens, ttl] as const : [count, ttl] as const
        }),
      tokenBucket: () => Effect.fail(storeError("the PostgreSQL store supports the fixed-window algorithm only")(undefined)),
      adaptiveConsume: () => Effect.succeed<RateLimiter.AdaptiveConsumeResult>({ delay: Duration.zero, epoch: 0, phase: "inactive" }),
      adaptiveFeedback: () => Effect.void
    })
  })
)
