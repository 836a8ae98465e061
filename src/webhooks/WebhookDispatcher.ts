import { Clock, Context, Data, Duration, Effect, Layer, Schedule } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import { toDate, toDateOrNull, toNumber, toStringOrNull } from "../db/Values.ts"
import { webhookInvoiceView } from "../domain/InvoiceViews.ts"
import { InvoiceRepo } from "../invoices/InvoiceRepo.ts"
import type { Resolver } from "./Destination.ts"
import { type SendResult, sendWebhook, systemResolver, WEBHOOK_TIMEOUT_MS } from "./Sender.ts"
import { signWebhook } from "./Signature.ts"
import { RETRY_DELAYS_MS } from "./WebhookEvents.ts"
import { WebhookSettings } from "./WebhookSettings.ts"

/** DNS for webhook destinations; tests inject their own answers. */
export class WebhookResolver extends Context.Service<WebhookResolver, { readonly resolve: Resolver }>()("Webhooks/Resolver") {
  static readonly system = Layer.succeed(WebhookResolver, { resolve: systemResolver })
}

export class DeliveryNotFound extends Data.TaggedError("DeliveryNotFound")<{}> {}

export interface AttemptView {
  readonly attemptedAt: string
  readonly statusCode: number | null
  readonly durationMs: number
  readonly error: string | null
  readonly responseExcerpt: string | null
  readonly manual: boolean
}

export interface DeliveryView {
  readonly id: string
  readonly invoiceId: string
  readonly event: string
  readonly url: string
  readonly status: string
  readonly attemptCount: number
  readonly lastStatusCode: number | null
  readonly nextAttemptAt: string | null
  readonly createdAt: string
  readonly attempts: ReadonlyArray<AttemptView>
}

export interface DeliveryFilters {
  readonly q?: string | undefined
  readonly status?: string | undefined
  readonly event?: string | undefined
  readonly cursor?: string | undefined
  readonly limit?: number | undefined
}

/** A lease longer than an attempt's 10-second budget: a claim whose process died is retried after it. */
const LEASE_MS = 3 * WEBHOOK_TIMEOUT_MS

/** The delivery state after an attempt (pure): delivered, retried on the fixed schedule, or failed for good. */
export const afterAttempt = (attemptCount: number, ok: boolean, now: number) =>
  ok
    ? { status: "delivered" as const, nextAttemptAt: null }
    : attemptCount > RETRY_DELAYS_MS.length
    ? { status: "failed" as const, nextAttemptAt: null }
    : { status: "pending" as const, nextAttemptAt: new Date(now + RETRY_DELAYS_MS[attemptCount - 1]) }

type Row = Record<string, unknown>

const ATTEMPTS_JSON = `COALESCE((SELECT json_agg(json_build_object('attemptedAt', a.attempted_at, 'statusCode', a.status_code,
  'durationMs', a.duration_ms, 'error', a.error, 'responseExcerpt', a.response_excerpt, 'manual', a.manual) ORDER BY a.id)
  FROM webhook_attempts a WHERE a.delivery_id = d.id), '[]'::json)`

const deliveryView = (row: Row): DeliveryView => ({
  id: String(row.id),
  invoiceId: String(row.invoiceId),
  event: String(row.event),
  url: String(row.url),
  status: String(row.status),
  attemptCount: toNumber(row.attemptCount),
  lastStatusCode: row.lastStatusCode === null ? null : toNumber(row.lastStatusCode),
  nextAttemptAt: toDateOrNull(row.nextAttemptAt)?.toISOString() ?? null,
  createdAt: toDate(row.createdAt).toISOString(),
  attempts: (row.attemptsJson as Array<Row>).map((attempt) => ({
    attemptedAt: toDate(attempt.attemptedAt).toISOString(),
    statusCode: attempt.statusCode === null ? null : toNumber(attempt.statusCode),
    durationMs: toNumber(attempt.durationMs),
    error: toStringOrNull(attempt.error),
    responseExcerpt: toStringOrNull(attempt.responseExcerpt),
    manual: attempt.manual === true
  }))
})

/**
 * Outbox to deliveries to attempts. Events committed with a lifecycle change are turned into one
 * delivery each (for the URL configured at that moment, unless the event is switched off), then
 * sent with the spec's retry schedule. Work is claimed with FOR UPDATE SKIP LOCKED and leases, so
 * several instances share it and a crash at any point leads to another attempt, never a lost event.
 */
export class WebhookDispatcher extends Context.Service<WebhookDispatcher, {
  readonly fanOut: Effect.Effect<number>
  readonly sendDue: Effect.Effect<number>
  readonly runOnce: Effect.Effect<void>
  readonly redeliver: (merchantId: string, deliveryId: string) => Effect.Effect<DeliveryView, DeliveryNotFound>
  readonly list: (merchantId: string, filters: DeliveryFilters) => Effect.Effect<{ deliveries: ReadonlyArray<DeliveryView>; nextCursor: string | null }>
}>()("Webhooks/WebhookDispatcher") {
  static readonly layer = Layer.effect(
    WebhookDispatcher,
    Effect.gen(function*() {
      const sql = yield* SqlClient.SqlClient
      const settings = yield* WebhookSettings
      const invoices = yield* InvoiceRepo
      const { resolve } = yield* WebhookResolver
      const { webhookAllowLoopback } = yield* AppConfig
      const now = Clock.currentTimeMillis

      const fanOut = Effect.gen(function*() {
        const at = new Date(yield* now)
        const events = yield* sql<Row>`SELECT id, invoice_id, merchant_id, event FROM outbox
          WHERE dispatched_at IS NULL ORDER BY id LIMIT 200 FOR UPDATE SKIP LOCKED`
        if (events.length === 0) return 0
        const merchantSettings = new Map<string, { url: string | null; enabledEvents: ReadonlyArray<string> }>()
        for (const merchantId of new Set(events.map((event) => String(event.merchantId)))) {
          merchantSettings.set(merchantId, yield* settings.get(merchantId))
        }
        const deliveries = events.flatMap((event) => {
          const target = merchantSettings.get(String(event.merchantId))
          if (target?.url === null || target === undefined || !target.enabledEvents.includes(String(event.event))) return []
          return [{
            id: crypto.randomUUID(),
            outbox_id: String(event.id),
            merchant_id: String(event.merchantId),
            invoice_id: String(event.invoiceId),
            event: String(event.event),
            url: target.url,
            status: "pending",
            next_attempt_at: at,
            created_at: at,
            updated_at: at
          }]
        })
        if (deliveries.length > 0) {
          yield* sql`INSERT INTO webhook_deliveries ${sql.insert(deliveries as [typeof deliveries[0], ...Array<typeof deliveries[0]>])}
            ON CONFLICT (outbox_id) DO NOTHING`
        }
        yield* sql`UPDATE outbox SET dispatched_at = ${at} WHERE id = ANY(${events.map((event) => String(event.id))}::bigint[])`
        return events.length
      }).pipe(sql.withTransaction, Effect.orDie)

      const attempt = (delivery: Row, manual: boolean) =>
        Effect.gen(function*() {
          const merchantId = String(delivery.merchantId)
          const target = yield* settings.forSending(merchantId)
          const parts = yield* invoices.find(String(delivery.invoiceId))
          const body = JSON.stringify({ event: delivery.event, invoice: parts === undefined ? null : webhookInvoiceView(parts.invoice) })
          const result: SendResult = target.secret === null
            ? { ok: false, statusCode: null, durationMs: 0, error: "no signing secret is configured", responseExcerpt: null }
            : yield* Effect.promise(() =>
              sendWebhook({
                url: String(delivery.url),
                body,
                resolver: resolve,
                allowLoopback: webhookAllowLoopback,
                headers: {
                  "content-type": "application/json",
                  "user-agent": "checkout-webhooks/1.0",
                  "x-checkout-signature": signWebhook(body, target.secret!),
                  "x-checkout-event": String(delivery.event),
                  "x-checkout-delivery": String(delivery.id)
                }
              })
            )
          const at = yield* now
          yield* sql`INSERT INTO webhook_attempts ${
            sql.insert({
              delivery_id: String(delivery.id),
              attempted_at: new Date(at),
              status_code: result.statusCode,
              duration_ms: result.durationMs,
              error: result.error,
              response_excerpt: result.responseExcerpt,
              manual
            })
          }`
          if (manual) {
            yield* sql`UPDATE webhook_deliveries SET last_status_code = ${result.statusCode}, updated_at = ${new Date(at)},
              status = CASE WHEN ${result.ok} THEN 'delivered' ELSE status END,
              next_attempt_at = CASE WHEN ${result.ok} THEN NULL ELSE next_attempt_at END
              WHERE id = ${String(delivery.id)}`
          } else {
            const attempts = toNumber(delivery.attemptCount) + 1
            const next = afterAttempt(attempts, result.ok, at)
            yield* sql`UPDATE webhook_deliveries SET attempt_count = ${attempts}, status = ${next.status},
              next_attempt_at = ${next.nextAttemptAt}, lease_until = NULL, last_status_code = ${result.statusCode},
              updated_at = ${new Date(at)} WHERE id = ${String(delivery.id)}`
          }
        }).pipe(Effect.orDie)

      const sendDue = Effect.gen(function*() {
        const at = yield* now
        const claimed = yield* sql<Row>`UPDATE webhook_deliveries SET lease_until = ${new Date(at + LEASE_MS)}
          WHERE id IN (SELECT id FROM webhook_deliveries
            WHERE status = 'pending' AND next_attempt_at <= ${new Date(at)} AND (lease_until IS NULL OR lease_until <= ${new Date(at)})
            ORDER BY next_attempt_at LIMIT 20 FOR UPDATE SKIP LOCKED)
          RETURNING *`.pipe(Effect.orDie)
        yield* Effect.forEach(claimed, (delivery) => attempt(delivery, false), { concurrency: 8, discard: true })
        return claimed.length
      })

      const findDelivery = (merchantId: string, deliveryId: string) =>
        sql<Row>`SELECT d.*, ${sql.literal(ATTEMPTS_JSON)} AS attempts_json FROM webhook_deliveries d
          WHERE d.id::text = ${deliveryId} AND d.merchant_id = ${merchantId}`.pipe(
          Effect.orDie,
          Effect.flatMap((rows) => (rows[0] === undefined ? Effect.fail(new DeliveryNotFound()) : Effect.succeed(rows[0])))
        )

      return {
        fanOut,
        sendDue,
        runOnce: Effect.andThen(fanOut, sendDue).pipe(Effect.asVoid),
        redeliver: (merchantId, deliveryId) =>
          Effect.gen(function*() {
            yield* attempt(yield* findDelivery(merchantId, deliveryId), true)
            return deliveryView(yield* findDelivery(merchantId, deliveryId))
          }),
        list: (merchantId, filters) =>
          Effect.gen(function*() {
            const limit = Math.min(Math.max(filters.limit ?? 50, 1), 200)
            const conditions = [sql`d.merchant_id = ${merchantId}`]
            if (filters.status !== undefined) conditions.push(sql`d.status = ${filters.status}`)
            if (filters.event !== undefined) conditions.push(sql`d.event = ${filters.event}`)
            if (filters.q !== undefined && filters.q !== "") {
              const q = filters.q
              conditions.push(sql`(d.id::text = ${q} OR d.invoice_id::text = ${q} OR d.event = ${q} OR d.url ILIKE ${`%${q}%`}
                OR d.last_status_code::text = ${q}
                OR EXISTS (SELECT 1 FROM webhook_attempts a WHERE a.delivery_id = d.id AND a.status_code::text = ${q}))`)
            }
            if (filters.cursor !== undefined) {
              const [createdAt, id] = Buffer.from(filters.cursor, "base64url").toString().split("|")
              conditions.push(sql`(d.created_at, d.id) < (${new Date(createdAt)}, ${id}::uuid)`)
            }
            const rows = yield* sql<Row>`SELECT d.*, ${sql.literal(ATTEMPTS_JSON)} AS attempts_json FROM webhook_deliveries d
              WHERE ${sql.and(conditions)} ORDER BY d.created_at DESC, d.id DESC LIMIT ${limit + 1}`.pipe(Effect.orDie)
            const page = rows.slice(0, limit).map(deliveryView)
            const last = page.at(-1)
            return {
              deliveries: page,
              nextCursor: rows.length > limit && last !== undefined ? Buffer.from(`${last.createdAt}|${last.id}`).toString("base64url") : null
            }
          })
      }
    })
  )

  /** The background dispatcher: fan out and send every second. */
  static readonly worker = Layer.effectDiscard(Effect.gen(function*() {
    const dispatcher = yield* WebhookDispatcher
    yield* dispatcher.runOnce.pipe(
      Effect.catchCause((cause) => Effect.logError("Webhook dispatch failed", cause)),
      Effect.repeat(Schedule.spaced(Duration.seconds(1))),
      Effect.forkScoped
    )
  }))
}
