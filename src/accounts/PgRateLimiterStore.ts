import { Clock, Duration, Effect, Layer, Schema } from "effect"
import { RateLimiter } from "effect/persistence"
import { SqlClient, type Statement } from "effect/sql"
import { bigintColumn } from "../db/Columns.ts"

/** A `rate_limits` window after the upsert (migration 0003). */
export const WindowRow = Schema.Struct({ count: Schema.Finite, expiresAtMs: bigintColumn(Schema.BigInt), lastExceeded: Schema.Boolean })
const decodeWindow = Schema.decodeUnknownEffect(Schema.Tuple([WindowRow]))

const storeError = (message: string) => (cause: unknown) => new RateLimiter.RateLimiterError({ reason: new RateLimiter.RateLimitStoreError({ message, cause }) })

/** One request's tokens against a fixed window, at the time `now`. */
export interface WindowCharge {
  readonly tokens: number
  /** Milliseconds one token extends the window by (the window over the limit). */
  readonly extension: number
  readonly limit: number | null
  readonly now: number
}

export const windowCharge = (tokens: number, refillRate: Duration.Duration, limit: number | undefined, now: number): WindowCharge => ({
  tokens,
  extension: Math.max(1, Math.ceil(Duration.toMillis(refillRate) * tokens)),
  limit: limit ?? null,
  now
})

/**
 * The fixed window's step for a `rate_limits AS r` row that exists: its `ON CONFLICT` clause and
 * `RETURNING` list, shared by the store and by the API-key admission's one-statement path.
 */
export const windowConflictUpdate = (sql: SqlClient.SqlClient, { tokens, extension, limit, now }: WindowCharge): Statement.Fragment =>
  sql`ON CONFLICT (key) DO UPDATE SET
    count = CASE WHEN r.expires_at_ms <= ${now} THEN ${tokens}::double precision
      WHEN ${limit}::double precision IS NOT NULL AND r.count + ${tokens} > ${limit}::double precision THEN r.count
      ELSE r.count + ${tokens} END,
    expires_at_ms = CASE WHEN r.expires_at_ms <= ${now} THEN ${now + extension}::bigint
      WHEN ${limit}::double precision IS NOT NULL AND r.count + ${tokens} > ${limit}::double precision THEN r.expires_at_ms
      ELSE r.expires_at_ms + ${extension} END,
    last_exceeded = r.expires_at_ms > ${now} AND ${limit}::double precision IS NOT NULL
      AND r.count + ${tokens} > ${limit}::double precision
  RETURNING count, expires_at_ms, last_exceeded`

/** The store's answer for a window row: the count as the library reads it, and the milliseconds left. */
export const windowCount = ({ count, expiresAtMs, lastExceeded }: typeof WindowRow.Type, { tokens, now }: WindowCharge): readonly [number, number] => {
  const ttl = Math.max(0, Number(expiresAtMs) - now)
  return lastExceeded ? [count + tokens, ttl] : [count, ttl]
}

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
          const charge = windowCharge(tokens, refillRate, limit, yield* Clock.currentTimeMillis)
          const rows = yield* sql`INSERT INTO rate_limits AS r (key, count, expires_at_ms, last_exceeded)
            VALUES (${key}, ${tokens}, ${charge.now + charge.extension}, false)
            ${windowConflictUpdate(sql, charge)}`.pipe(Effect.mapError(storeError("rate limit store unavailable")))
          const [row] = yield* decodeWindow(rows).pipe(Effect.orDie)
          return windowCount(row, charge)
        }),
      tokenBucket: () => Effect.fail(storeError("the PostgreSQL store supports the fixed-window algorithm only")(undefined)),
      adaptiveConsume: () => Effect.succeed<RateLimiter.AdaptiveConsumeResult>({ delay: Duration.zero, epoch: 0, phase: "inactive" }),
      adaptiveFeedback: () => Effect.void
    })
  })
)
