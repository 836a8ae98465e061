import { Schema, Struct } from "effect"
import { rowOf } from "../db/Columns.ts"
import { DeliveryId, InvoiceId, MerchantId, RefundId } from "../domain/Ids.ts"
import { WebhookEventName } from "../domain/Statuses.ts"
import { NullableDate } from "../domain/Timestamps.ts"

export const DeliveryStatus = Schema.Literals(["pending", "delivered", "failed"])
export type DeliveryStatus = typeof DeliveryStatus.Type

/** One recorded attempt of a delivery: where it went and what the endpoint answered. */
export const DeliveryAttempt = Schema.Struct({
  attemptedAt: Schema.Date,
  url: Schema.NullOr(Schema.String).annotate({ description: "The URL this attempt was sent to: the one configured at the time of the attempt." }),
  statusCode: Schema.NullOr(Schema.Int),
  durationMs: Schema.Int,
  error: Schema.NullOr(Schema.String),
  responseExcerpt: Schema.NullOr(Schema.String),
  manual: Schema.Boolean
})
export type DeliveryAttempt = typeof DeliveryAttempt.Type

/** One event of an invoice on its way to the merchant's webhook URL, as stored. */
export const Delivery = Schema.Struct({
  id: DeliveryId,
  merchantId: MerchantId,
  invoiceId: InvoiceId,
  event: WebhookEventName,
  /** Its invoice's mode: a test invoice's delivery goes to the test settings' URL, signed with the test secret. */
  livemode: Schema.Boolean,
  /** The refund a refund event reports (its webhook carries the refund's view); null for invoice events. */
  refundId: Schema.NullOr(RefundId),
  /** The URL last attempted (the one configured when the event was picked up, until the first attempt). */
  url: Schema.String,
  status: DeliveryStatus,
  attemptCount: Schema.Int,
  nextAttemptAt: NullableDate,
  leaseUntil: NullableDate,
  lastStatusCode: Schema.NullOr(Schema.Int),
  createdAt: Schema.Date,
  updatedAt: Schema.Date
})
export type Delivery = typeof Delivery.Type

const VIEW_FIELDS = ["id", "invoiceId", "refundId", "event", "livemode", "url", "status", "attemptCount", "lastStatusCode", "nextAttemptAt", "createdAt"] as const

/** The dashboard's view of a delivery: with its attempts, without the account and the scheduler's lease. */
export const DeliveryView = Delivery.mapFields(Struct.pick(VIEW_FIELDS)).mapFields(Struct.assign({ attempts: Schema.Array(DeliveryAttempt) }))
export type DeliveryView = typeof DeliveryView.Type

/** An attempt as `json_build_object` renders it (times as ISO text). */
export const DeliveryAttemptRow = rowOf(DeliveryAttempt)

/** A `webhook_deliveries` row as the driver returns it. */
export const DeliveryRow = rowOf(Delivery)

/** A delivery row with its attempts aggregated under `attempts`. */
export const DeliveryViewRow = rowOf(Delivery.mapFields(Struct.pick(VIEW_FIELDS))).mapFields(Struct.assign({ attempts: Schema.Array(DeliveryAttemptRow) }))
