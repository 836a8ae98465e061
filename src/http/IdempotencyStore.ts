import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { toDate, toDateOrNull, toNumber, toStringOrNull } from "../db/Values.ts"

export type IdempotencyBegin =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string }
  /** A run whose claim expired (its process died) had already committed its effect on this resource. */
  | { readonly _tag: "Recover"; readonly resourceId: string }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch" }

type Row = Record<string, unknown>

export interface IdempotencySettings {
  readonly ttlHours: number
  /** How long a running claim holds without renewal; a little longer than the longest request. */
  readonly leaseMs: number
}

/**
 * Idempotency records live in the database, so every service instance sees the same keys. A
 * running claim is a lease, renewed while its request runs: when the process running it dies,
 * the lease runs out and a retry takes the claim over instead of answering "still in progress"
 * for the whole retention period.
 */
export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  readonly settings: IdempotencySettings
  readonly begin: (merchantId: string, scope: string, key: string, requestHash: string, now: Date) => Effect.Effect<IdempotencyBegin>
  readonly renew: (merchantId: string, scope: string, key: string, now: Date) => Effect.Effect<void>
  readonly complete: (merchantId: string, scope: string, key: string, status: number, body: string) => Effect.Effect<void>
  readonly release: (merchantId: string, scope: string, key: string) => Effect.Effect<void>
}>()("Http/IdempotencyStore") {
  static readonly layer = Layer.effect(
    IdempotencyStore,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const config = yield* AppConfig
      const settings: IdempotencySettings = { ttlHours: config.idempotencyTtlHours, leaseMs: config.idempotencyLeaseMs }
      const leaseEnd = (now: Date) => new Date(now.getTime() + settings.leaseMs)
      const claim = (merchantId: string, scope: string, key: string, requestHash: string, now: Date) =>
        sql<Row>`INSERT INTO idempotency_keys ${
          sql.insert({ merchant_id: merchantId, scope, key, request_hash: requestHash, state: "running", created_at: now, lease_until: leaseEnd(now) })
        } ON CONFLICT DO NOTHING RETURNING key`
      const begin = (merchantId: string, scope: string, key: string, requestHash: string, now: Date): Effect.Effect<IdempotencyBegin> =>
        Effect.gen(function*() {
          if ((yield* claim(merchantId, scope, key, requestHash, now)).length > 0) return { _tag: "Started" } as const
          const rows = yield* sql<Row>`SELECT * FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}`
          const existing = rows[0]
          if (existing === undefined) return yield* begin(merchantId, scope, key, requestHash, now)
          const createdAt = toDate(existing.createdAt)
          if (createdAt.getTime() + settings.ttlHours * 3_600_000 < now.getTime()) {
            yield* sql`DELETE FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}
              AND created_at = ${createdAt}`
            return yield* begin(merchantId, scope, key, requestHash, now)
          }
          if (existing.requestHash !== requestHash) return { _tag: "Mismatch" } as const
          if (existing.state === "done") {
            return { _tag: "Replay", status: toNumber(existing.responseStatus), body: String(existing.responseBody) } as const
          }
          // Rows from before leases count from their creation.
          const leaseUntil = toDateOrNull(existing.leaseUntil) ?? leaseEnd(createdAt)
          if (leaseUntil.getTime() > now.getTime()) return { _tag: "InProgress" } as const
          const taken = yield* sql<Row>`UPDATE idempotency_keys SET lease_until = ${leaseEnd(now)}
            WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key} AND state = 'running'
            AND lease_until IS NOT DISTINCT FROM ${toDateOrNull(existing.leaseUntil)} RETURNING resource_id`
          // Another retry took it over first: it is in progress again.
          if (taken.length === 0) return yield* begin(merchantId, scope, key, requestHash, now)
          const resourceId = toStringOrNull(taken[0].resourceId)
          return resourceId === null ? { _tag: "Started" } as const : { _tag: "Recover", resourceId } as const
        }).pipe(Effect.orDie)
      return {
        settings,
        begin,
        renew: (merchantId, scope, key, now) =>
          sql`UPDATE idempotency_keys SET lease_until = ${leaseEnd(now)}
            WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key} AND state = 'running'`.pipe(Effect.asVoid, Effect.orDie),
        complete: (merchantId, scope, key, status, body) =>
          sql`UPDATE idempotency_keys SET state = 'done', response_status = ${status}, response_body = ${body}, lease_until = NULL
            WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}`.pipe(Effect.asVoid, Effect.orDie),
        release: (merchantId, scope, key) =>
          sql`DELETE FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}`.pipe(
            Effect.asVoid,
            Effect.orDie
          )
      }
    })
  )
}
