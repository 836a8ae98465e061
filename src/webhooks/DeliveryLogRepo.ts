import { Context, Effect, Layer, Option, Schema } from "effect"
import { SqlClient } from "effect/sql"
import { idPrefixPattern, likePattern } from "../db/KeysetCursor.ts"
import { type DeliveryView, DeliveryViewRow } from "./Delivery.ts"
import type { MerchantId } from "../domain/Ids.ts"

/** What a page of the delivery log is filtered by (all optional, combined with AND). */
export interface DeliveryConditions {
  readonly livemode: boolean
  readonly q?: string | undefined
  readonly status?: string | undefined
  readonly event?: string | undefined
  /** Continue after this delivery (newest first). */
  readonly after?: { readonly at: Date; readonly id: string } | undefined
}

const WITH_ATTEMPTS = `d.*, COALESCE((SELECT json_agg(json_build_object('attemptedAt', a.attempted_at, 'url', a.url, 'statusCode', a.status_code,
  'durationMs', a.duration_ms, 'error', a.error, 'responseExcerpt', a.response_excerpt, 'manual', a.manual) ORDER BY a.id)
  FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::json) AS attempts`

const decodeViews = Schema.decodeUnknownEffect(Schema.Array(DeliveryViewRow))

const make = Effect.gen(function*() {
  const sql = yield* SqlClient.SqlClient
  const find = (merchantId: MerchantId, deliveryId: string) =>
    sql`SELECT ${sql.literal(WITH_ATTEMPTS)} FROM webhook_deliveries d
    WHERE d.id::text = ${deliveryId} AND d.merchant_id = ${merchantId}`.pipe(Effect.flatMap(decodeViews), Effect.map((rows) => Option.fromNullishOr(rows[0])), Effect.orDie)
  const idPrefixCondition = (q: string) => {
    const prefix = idPrefixPattern(q)
    return prefix === undefined ? [] : [sql`d.id::text LIKE ${prefix}`, sql`d.invoice_id::text LIKE ${prefix}`]
  }
  /** The delivery id, invoice id, event, URL, status code or invoice reference that `q` names. */
  const searchCondition = (q: string) =>
    sql.or([
      sql`(d.id::text = ${q.toLowerCase()} OR d.invoice_id::text = ${q.toLowerCase()} OR d.event = ${q}
      OR d.url ILIKE ${likePattern(q)} OR d.last_status_code::text = ${q}
      OR EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.status_code::text = ${q})
      OR EXISTS (SELECT 1 FROM invoices i WHERE i.id = d.invoice_id AND i.merchant_id = d.merchant_id AND i.merchant_reference ILIKE ${likePattern(q)}))`,
      ...idPrefixCondition(q)
    ])
  const page = (merchantId: MerchantId, conditions: DeliveryConditions, limit: number) => {
    const where = [sql`d.merchant_id = ${merchantId}`, sql`d.livemode = ${conditions.livemode}`]
    if (conditions.status !== undefined) where.push(sql`d.status = ${conditions.status}`)
    if (conditions.event !== undefined) where.push(sql`d.event = ${conditions.event}`)
    const q = conditions.q?.trim()
    if (q !== undefined && q !== "") {
      where.push(sql`${searchCondition(q)}`)
    }
    if (conditions.after !== undefined) where.push(sql`(d.created_at, d.id) < (${conditions.after.at}, ${conditions.after.id}::uuid)`)
    return sql`SELECT ${sql.literal(WITH_ATTEMPTS)} FROM webhook_deliveries d
    WHERE ${sql.and(where)} ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit}`.pipe(Effect.flatMap(decodeViews), Effect.orDie)
  }
  return { find, page } satisfies DeliveryLogRepo["Service"]
})

/** The dashboard's reading of webhook deliveries with their attempts. SQL and decode failures are defects here. */
export class DeliveryLogRepo extends Context.Service<DeliveryLogRepo, {
  /** One delivery of the merchant with its attempts; undefined when the merchant has none with that id. */
  readonly find: (merchantId: MerchantId, deliveryId: string) => Effect.Effect<Option.Option<DeliveryView>>
  /**
   * Up to `limit` of the merchant's deliveries, newest first. `q` matches a delivery id, invoice id
   * or event exactly, the start of a delivery or invoice id (8 hex digits or more), a part of the URL
   * or of the invoice's merchant reference, or the HTTP status of the last or any earlier attempt.
   */
  readonly page: (merchantId: MerchantId, conditions: DeliveryConditions, limit: number) => Effect.Effect<ReadonlyArray<DeliveryView>>
}>()("Webhooks/DeliveryLogRepo") {
  /** The repository over the SqlClient at hand (for the log's functions, which take the client from their caller). */
  static readonly make = make
  static readonly layer = Layer.effect(DeliveryLogRepo, make)
}
