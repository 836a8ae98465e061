import { Data, Effect, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { decodeKeysetCursor, encodeKeysetCursor, likePattern } from "../db/KeysetCursor.ts"
import { type DeliveryView, DeliveryViewRow } from "./Delivery.ts"

export type { DeliveryView } from "./Delivery.ts"

export class DeliveryNotFound extends Data.TaggedError("DeliveryNotFound")<{}> {}
export class InvalidCursor extends Data.TaggedError("InvalidCursor")<{}> {}

export interface DeliveryFilters {
  readonly q?: string | undefined
  readonly status?: string | undefined
  readonly event?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

export interface DeliveryPage {
  readonly deliveries: ReadonlyArray<DeliveryView>
  readonly nextCursor: string | null
}

const DEFAULT_PAGE = 50
const MAX_PAGE = 200

const WITH_ATTEMPTS = `d.*, COALESCE((SELECT json_agg(json_build_object('attemptedAt', a.attempted_at, 'url', a.url, 'statusCode', a.status_code,
  'durationMs', a.duration_ms, 'error', a.error, 'responseExcerpt', a.response_excerpt, 'manual', a.manual) ORDER BY a.id)
  FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts`

const decodeViews = Schema.decodeUnknownEffect(Schema.Array(DeliveryViewRow))

const decodeCursor = (cursor: string) => {
  const position = decodeKeysetCursor(cursor)
  return position === undefined ? Effect.fail(new InvalidCursor()) : Effect.succeed(position)
}

/** One delivery of a merchant with its attempts, as the dashboard shows it. */
export const findDelivery = Effect.fn("DeliveryLog.find")(function*(merchantId: string, deliveryId: string) {
  const sql = yield* SqlClient.SqlClient
  const rows = yield* sql`SELECT ${sql.literal(WITH_ATTEMPTS)} FROM webhook_deliveries d
    WHERE d.id::text = ${deliveryId} AND d.merchant_id = ${merchantId}`.pipe(Effect.flatMap(decodeViews), Effect.orDie)
  if (rows[0] === undefined) return yield* new DeliveryNotFound()
  return rows[0]
})

/**
 * A page of a merchant's deliveries, newest first. `q` matches a delivery id, invoice id or event
 * exactly, a part of the URL, or the HTTP status of the last or any earlier attempt.
 */
export const listDeliveries = Effect.fn("DeliveryLog.list")(function*(merchantId: string, filters: DeliveryFilters) {
  const sql = yield* SqlClient.SqlClient
  const limit = Math.min(Math.max(filters.limit ?? DEFAULT_PAGE, 1), MAX_PAGE)
  const conditions = [sql`d.merchant_id = ${merchantId}`]
  if (filters.status !== undefined) conditions.push(sql`d.status = ${filters.status}`)
  if (filters.event !== undefined) conditions.push(sql`d.event = ${filters.event}`)
  const q = filters.q?.trim()
  if (q !== undefined && q !== "") {
    conditions.push(sql`(d.id::text = ${q.toLowerCase()} OR d.invoice_id::text = ${q.toLowerCase()} OR d.event = ${q}
      OR d.url ILIKE ${likePattern(q)} OR d.last_status_code::text = ${q}
      OR EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.status_code::text = ${q}))`)
  }
  if (filters.cursor !== undefined) {
    const after = yield* decodeCursor(filters.cursor)
    conditions.push(sql`(d.created_at, d.id) < (${after.at}, ${after.id}::uuid)`)
  }
  const rows = yield* sql`SELECT ${sql.literal(WITH_ATTEMPTS)} FROM webhook_deliveries d
    WHERE ${sql.and(conditions)} ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit + 1}`.pipe(Effect.flatMap(decodeViews), Effect.orDie)
  const page = rows.slice(0, limit)
  const last = page.at(-1)
  return {
    deliveries: page,
    nextCursor: rows.length > limit && last !== undefined ? encodeKeysetCursor(last.createdAt.toISOString(), last.id) : null
  } satisfies DeliveryPage
})
