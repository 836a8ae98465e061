import { Context, Effect, Layer } from "effect"
import { SqlClient } from "effect/sql"
import { toDate, toNumber } from "../db/Values.ts"

export type IdempotencyBegin =
  | { readonly _tag: "Started" }
  | { readonly _tag: "Replay"; readonly status: number; readonly body: string }
  | { readonly _tag: "InProgress" }
  | { readonly _tag: "Mismatch" }

type Row = Record<string, unknown>

/** Idempotency records live in the database, so every service instance sees the same keys. */
export class IdempotencyStore extends Context.Service<IdempotencyStore, {
  readonly begin: (merchantId: string, scope: string, key: string, requestHash: string, now: Date) => Effect.Effect<IdempotencyBegin>
  readonly complete: (merchantId: string, scope: string, key: string, status: number, body: string) => Effect.Effect<void>
  readonly release: (merchantId: string, scope: string, key: string) => Effect.Effect<void>
}>()("Http/IdempotencyStore") {
  static readonly layer = (ttlHours: number) =>
    Layer.effect(
      IdempotencyStore,
      Effect.gen(function*() {
        const sql = yield* SqlClient.SqlClient
        const claim = (merchantId: string, scope: string, key: string, requestHash: string, now: Date) =>
          sql<Row>`INSERT INTO idempotency_keys ${
            sql.insert({ merchant_id: merchantId, scope, key, request_hash: requestHash, state: "running", created_at: now })
          } ON CONFLICT DO NOTHING RETURNING key`
        const begin = (merchantId: string, scope: string, key: string, requestHash: string, now: Date): Effect.Effect<IdempotencyBegin> =>
          Effect.gen(function*() {
            if ((yield* claim(merchantId, scope, key, requestHash, now)).length > 0) return { _tag: "Started" } as const
            const rows = yield* sql<Row>`SELECT * FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}`
            const existing = rows[0]
            if (existing === undefined) return yield* begin(merchantId, scope, key, requestHash, now)
            if (toDate(existing.createdAt).getTime() + ttlHours * 3_600_000 < now.getTime()) {
              yield* sql`DELETE FROM idempotency_keys WHERE merchant_id = ${merchantId} AND scope = ${scope} AND key = ${key}
                AND created_at = ${toDate(existing.createdAt)}`
              return yield* begin(merchantId, scope, key, requestHash, now)
            }
            if (existing.requestHash !== requestHash) return { _tag: "Mismatch" } as const
            if (existing.state !== "done") return { _tag: "InProgress" } as const
            return { _tag: "Replay", status: toNumber(existing.responseStatus), body: String(existing.responseBody) } as const
          }).pipe(Effect.orDie)
        return {
          begin,
          complete: (merchantId, scope, key, status, body) =>
            sql`UPDATE idempotency_keys SET state = 'done', response_status = ${status}, response_body = ${body}
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
