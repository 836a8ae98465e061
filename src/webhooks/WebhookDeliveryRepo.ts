import { Context, Effect, Layer, Schema, Struct } from "effect"
import { SqlClient, SqlSchema } from "effect/sql"
import { bigintColumn } from "../db/Columns.ts"
import { DeliveryId, InvoiceId, MerchantId, RefundId } from "../domain/Ids.ts"
import { WebhookEventName } from "../domain/Statuses.ts"
import { type Delivery, DeliveryRow } from "./Delivery.ts"

/** An undispatched event of the outbox (migration 0001); its id is a bigserial. */
const OutboxEvent = Schema.Struct({
  id: bigintColumn(Schema.BigInt),
  invoiceId: InvoiceId,
  merchantId: MerchantId,
  event: WebhookEventName,
  refundId: Schema.NullOr(RefundId),
  /** Which event of this name (and refund) the invoice is at: part of the event's identity (EventIdentity.ts). */
  occurrence: Schema.Int,
  /** The invoice's mode: which of the merchant's settings the event goes to. */
  livemode: Schema.Boolean
})
export type OutboxEvent = typeof OutboxEvent.Type

const LockedDelivery = DeliveryRow.mapFields(Struct.pick(["status", "attemptCount", "nextAttemptAt"]))
const ClaimedDelivery = DeliveryRow.mapFields(Struct.pick(["id", "merchantId", "invoiceId", "refundId", "event", "livemode", "url", "attemptCount"]))
export type ClaimedDelivery = typeof ClaimedDelivery.Type

const ClaimRequest = Schema.Struct({
  at: Schema.Date,
  leaseUntil: Schema.Date,
  limit: Schema.Number,
  window: Schema.Number,
  merchantRoom: Schema.Number,
  full: Schema.Array(Schema.String),
  busy: Schema.Array(Schema.String),
  room: Schema.Array(Schema.Number)
})

/** A new delivery of an outbox event, pending from its creation. */
export type NewDelivery = {
  readonly id: string
  readonly outboxId: string
  readonly merchantId: MerchantId
  readonly invoiceId: InvoiceId
  readonly refundId: RefundId | null
  readonly event: WebhookEventName
  readonly livemode: boolean
  readonly url: string
  readonly status: "pending"
  readonly nextAttemptAt: Date
  readonly createdAt: Date
  readonly updatedAt: Date
}

/** One attempt of a delivery: where it went and what came back. */
export interface AttemptRecord {
  readonly url: string
  readonly attemptedAt: Date
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly responseExcerpt: string | null
  readonly manual: boolean
}

/** A delivery's state after an attempt. */
export interface DeliveryState {
  readonly attemptCount: number
  readonly status: string
  readonly nextAttemptAt: Date | null
  readonly url: string
  readonly lastStatusCode: number | null
  readonly updatedAt: Date
}

/**
 * The dispatcher's persistence: the outbox's undispatched events, deliveries and their attempts.
 * SQL and decode failures are defects here.
 */
export class WebhookDeliveryRepo extends Context.Service<WebhookDeliveryRepo, {
  /** Up to `limit` undispatched events, oldest first, locked (SKIP LOCKED) for the rest of the transaction. */
  readonly lockUndispatched: (limit: number) => Effect.Effect<ReadonlyArray<OutboxEvent>>
  /** Stores the deliveries; one of an event that has a delivery already is left out. */
  readonly insertDeliveries: (deliveries: readonly [NewDelivery, ...Array<NewDelivery>]) => Effect.Effect<void>
  readonly markDispatched: (eventIds: ReadonlyArray<bigint>, at: Date) => Effect.Effect<void>
  /**
   * Takes up to `limit` due deliveries, oldest first, under a lease until `leaseUntil`, looking at
   * `window` due ones (locked and skipped by others meanwhile): leaves out the merchants in `full`
   * and takes at most `room` of each merchant in `busy` (`merchantRoom` of any other).
   */
  readonly claimDue: (request: typeof ClaimRequest.Type) => Effect.Effect<ReadonlyArray<ClaimedDelivery>>
  /** The delivery's state under its row lock, for the rest of the transaction. */
  readonly lock: (id: DeliveryId) => Effect.Effect<Pick<Delivery, "status" | "attemptCount" | "nextAttemptAt">>
  readonly insertAttempt: (deliveryId: DeliveryId, attempt: AttemptRecord) => Effect.Effect<void>
  /** Saves the state after an attempt; a manual one keeps the delivery's lease, an automatic one ends it. */
  readonly saveState: (id: DeliveryId, state: DeliveryState, keepLease: boolean) => Effect.Effect<void>
  /**
   * Records an automatic attempt and the delivery's next state in one statement, outside a
   * transaction, only while the delivery is still pending with `claimedCount` attempts and its row
   * is not locked (the guard never waits for a lock); answers whether it did.
   */
  readonly recordIfStillClaimed: (id: DeliveryId, claimedCount: number, attempt: AttemptRecord, state: DeliveryState) => Effect.Effect<boolean>
  readonly withTransaction: <A, E, R>(effect: Effect.Effect<A, E, R>) => Effect.Effect<A, E, R>
}>()("Webhooks/WebhookDeliveryRepo") {
  static readonly layer = Layer.effect(
    WebhookDeliveryRepo,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient

      const findUndispatched = SqlSchema.findAll({
        Request: Schema.Number,
        Result: OutboxEvent,
        execute: (limit) =>
          sql`SELECT id, invoice_id, merchant_id, event, refund_id,
              (SELECT count(*) FROM outbox earlier WHERE earlier.invoice_id = outbox.invoice_id AND earlier.event = outbox.event
                AND earlier.refund_id IS NOT DISTINCT FROM outbox.refund_id AND earlier.id <= outbox.id)::int AS occurrence,
              COALESCE((SELECT i.livemode FROM invoices i WHERE i.id = outbox.invoice_id), true) AS livemode
            FROM outbox WHERE dispatched_at IS NULL ORDER BY id LIMIT ${limit} FOR UPDATE SKIP LOCKED`
      })
      const lockDelivery = SqlSchema.findOne({
        Request: Schema.Struct({ id: DeliveryId }),
        Result: LockedDelivery,
        execute: ({ id }) => sql`SELECT status, attempt_count, next_attempt_at FROM webhook_deliveries WHERE id = ${id} FOR UPDATE`
      })
      const claimDue = SqlSchema.findAll({
        Request: ClaimRequest,
        Result: ClaimedDelivery,
        execute: ({ at, leaseUntil, limit, window, merchantRoom, full, busy, room }) =>
          sql`UPDATE webhook_deliveries SET lease_until = ${leaseUntil}
            WHERE id IN (SELECT id FROM (
              SELECT candidate.id, candidate.next_attempt_at,
                row_number() OVER (PARTITION BY candidate.merchant_id ORDER BY candidate.next_attempt_at) AS place,
                COALESCE(busy.room, ${merchantRoom}) AS room
              FROM (SELECT id, merchant_id, next_attempt_at FROM webhook_deliveries
                WHERE status = 'pending' AND next_attempt_at <= ${at} AND (lease_until IS NULL OR lease_until <= ${at})
                  AND merchant_id <> ALL(${full}::uuid[])
                ORDER BY next_attempt_at LIMIT ${window} FOR UPDATE SKIP LOCKED) candidate
              LEFT JOIN unnest(${busy}::uuid[], ${room}::int[]) AS busy (merchant_id, room) ON busy.merchant_id = candidate.merchant_id
            ) ranked WHERE place <= room ORDER BY next_attempt_at LIMIT ${limit})
            RETURNING id, merchant_id, invoice_id, refund_id, event, livemode, url, attempt_count`
      })

      return {
        lockUndispatched: (limit) => Effect.orDie(findUndispatched(limit)),
        insertDeliveries: (deliveries) =>
          Effect.orDie(sql`INSERT INTO webhook_deliveries ${sql.insert(deliveries)}
            ON CONFLICT DO NOTHING`),
        markDispatched: (eventIds, at) => Effect.orDie(sql`UPDATE outbox SET dispatched_at = ${at} WHERE id = ANY(${eventIds.map((id) => id.toString())}::bigint[])`),
        claimDue: (request) => Effect.orDie(claimDue(request)),
        lock: (id) => Effect.orDie(lockDelivery({ id })),
        insertAttempt: (deliveryId, attempt) =>
          Effect.orDie(sql`INSERT INTO webhook_attempts ${
            sql.insert({
              delivery_id: deliveryId,
              url: attempt.url,
              attempted_at: attempt.attemptedAt,
              status_code: attempt.statusCode,
              duration_ms: attempt.durationMs,
              error: attempt.error,
              response_excerpt: attempt.responseExcerpt,
              manual: attempt.manual
            })
          }`),
        saveState: (id, state, keepLease) =>
          Effect.orDie(sql`UPDATE webhook_deliveries SET attempt_count = ${state.attemptCount}, status = ${state.status}, url = ${state.url},
            next_attempt_at = ${state.nextAttemptAt}, lease_until = ${keepLease ? sql`lease_until` : null},
            last_status_code = ${state.lastStatusCode}, updated_at = ${state.updatedAt} WHERE id = ${id}`),
        recordIfStillClaimed: (id, claimedCount, attempt, state) =>
          sql<{ readonly written: number }>`WITH target AS (
              SELECT id FROM webhook_deliveries
              WHERE id = ${id} AND status = 'pending' AND attempt_count = ${claimedCount}
              FOR UPDATE SKIP LOCKED
            ), attempt AS (
              INSERT INTO webhook_attempts (delivery_id, url, attempted_at, status_code, duration_ms, error, response_excerpt, manual)
              SELECT id, ${attempt.url}, ${attempt.attemptedAt}, ${attempt.statusCode}, ${attempt.durationMs}, ${attempt.error}, ${attempt.responseExcerpt}, false
              FROM target
            ), updated AS (
              UPDATE webhook_deliveries d SET attempt_count = ${state.attemptCount}, status = ${state.status},
                next_attempt_at = ${state.nextAttemptAt}, url = ${state.url}, lease_until = NULL, last_status_code = ${state.lastStatusCode}, updated_at = ${state.updatedAt}
              FROM target WHERE d.id = target.id RETURNING d.id
            ) SELECT count(*)::int AS written FROM updated`.pipe(Effect.map(([{ written }]) => written > 0), Effect.orDie),
        withTransaction: (effect) => sql.withTransaction(effect).pipe(Effect.catchTag("SqlError", Effect.die))
      }
    })
  )
}
