import { Context, Effect, Layer, Option, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { DateColumn, NullableDateColumn } from "../db/Columns.ts"
import { NullableDate } from "../domain/Timestamps.ts"

export type IdempotencyBegin =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string }
  /** A run whose claim expired (its process died) had already committed its effect on this resource. */
  | { readonly _tag: "Recover"; readonly resourceId: string }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch" }

/** An `idempotency_keys` row: a running claim (a lease) or a finished request's stored answer. */
const IdempotencyRow = Schema.Struct({
  key: Schema.String,
  requestHash: Schema.String,
  state: Schema.Literals(["running", "done"]),
  responseStatus: Schema.NullOr(Schema.Int),
  responseBody: Schema.NullOr(Schema.String),
  createdAt: DateColumn,
  leaseUntil: NullableDateColumn,
  resourceId: Schema.NullOr(Schema.String)
})

/** Rounds of read and compare-and-set before a key counts as in use by another request. */
const MAX_ROUNDS = 5

const KeyRequest = Schema.Struct({ merchantId: Schema.String, scope: Schema.String, key: Schema.String })

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
      const claim = SqlSchema.findAll({
        Request: Schema.Struct({ ...KeyRequest.fields, requestHash: Schema.String, now: Schema.Date }),
        Result: IdempotencyRow.mapFields(Struct.pick(["key"])),
        execute: ({ merchantId, scope, key, requestHash, now }) =>
          sql`INSERT INTO idempotency_keys ${
            sql.insert({ merchantId, scope, key, requestHash, state: "running", createdAt: now, leaseUntil: leaseEnd(now) })
          } ON CONFLICT DO NOTHING RETURNING key`
      })
      const find = SqlSchema.findOneOption({
        Request: KeyRequest,
        Result: IdempotencyRow,
        execute: ({ merchantId, scope, key }) =>
          sql`SELECT key, request_hash, state, response_status, response_body, created_at, lease_until, resource_id
            FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}`
      })
      const takeOver = SqlSchema.findAll({
        Request: Schema.Struct({ ...KeyRequest.fields, now: Schema.Date, leaseUntil: NullableDate }),
        Result: IdempotencyRow.mapFields(Struct.pick(["resourceId"])),
        execute: ({ merchantId, scope, key, now, leaseUntil }) =>
          sql`UPDATE idempotency_keys SET lease_until = ${leaseEnd(now)}
            WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key} AND state = 'running'
            AND date_trunc('milliseconds', lease_until) IS NOT DISTINCT FROM ${leaseUntil} RETURNING resource_id`
      })
      // The compare-and-set of a takeover is retried when another request changed the row in between;
      // past a few rounds the key is simply in use (409, retry later), never a request that spins.
      const attempt = (merchantId: string, scope: string, key: string, requestHash: string, now: Date, round = 1): Effect.Effect<IdempotencyBegin> =>
        round > MAX_ROUNDS ? Effect.succeed({ _tag: "InProgress" } as const) : Effect.gen(function*() {
          if ((yield* claim({ merchantId, scope, key, requestHash, now })).length > 0) return { _tag: "Started" } as const
          const found = yield* find({ merchantId, scope, key })
          if (Option.isNone(found)) return yield* attempt(merchantId, scope, key, requestHash, now, round + 1)
          const existing = found.value
          if (existing.createdAt.getTime() + settings.ttlHours * 3_600_000 < now.getTime()) {
            yield* sql`DELETE FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}
              AND created_at = ${existing.createdAt}`
            return yield* attempt(merchantId, scope, key, requestHash, now, round + 1)
          }
          if (existing.requestHash !== requestHash) return { _tag: "Mismatch" } as const
          if (existing.state === "done") {
            if (existing.responseStatus === null || existing.responseBody === null) {
              return yield* Effect.die(new Error("A finished idempotency record has no stored response"))
            }
            return { _tag: "Replay", status: existing.responseStatus, body: existing.responseBody } as const
          }
          // Rows from before leases count from their creation.
          const leaseUntil = existing.leaseUntil ?? leaseEnd(existing.createdAt)
          if (leaseUntil.getTime() > now.getTime()) return { _tag: "InProgress" } as const
          const taken = yield* takeOver({ merchantId, scope, key, now, leaseUntil: existing.leaseUntil })
          // Another retry took it over first: it is in progress again.
          if (taken.length === 0) return yield* attempt(merchantId, scope, key, requestHash, now, round + 1)
          const resourceId = taken[0].resourceId
          return resourceId === null ? { _tag: "Started" } as const : { _tag: "Recover", resourceId } as const
        }).pipe(Effect.orDie)
      const begin = Effect.fnUntraced(function*(merchantId: string, scope: string, key: string, requestHash: string, now: Date) {
        return yield* attempt(merchantId, scope, key, requestHash, now)
      })
      return {
        settings,
        begin,
        renew: Effect.fnUntraced(function*(merchantId, scope, key, now) {
          yield* sql`UPDATE idempotency_keys SET lease_until = ${leaseEnd(now)}
            WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key} AND state = 'running'`
        }, Effect.orDie),
        complete: Effect.fnUntraced(function*(merchantId, scope, key, status, body) {
          yield* sql`UPDATE idempotency_keys SET state = 'done', response_status = ${status}, response_body = ${body}, lease_until = NULL
            WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}`
        }, Effect.orDie),
        release: Effect.fnUntraced(function*(merchantId, scope, key) {
          yield* sql`DELETE FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}`
        }, Effect.orDie)
      }
    })
  )
}
