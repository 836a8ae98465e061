import { Schema, Struct } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, NotFound } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { LivemodeQuery } from "../http/LivemodeQuery.ts"
import { text, UuidParam } from "../http/RequestSchemas.ts"
import { jsonOf } from "../domain/EntitySchema.ts"
import { DeliveryAttempt, DeliveryStatus, DeliveryView } from "./Delivery.ts"
import { SELECTABLE_WEBHOOK_EVENTS } from "./WebhookEvents.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

const EventName = Schema.Literals(SELECTABLE_WEBHOOK_EVENTS).annotate({ message: `must be one of ${SELECTABLE_WEBHOOK_EVENTS.join(", ")}` })

const SettingsView = Schema.Struct({
  url: Schema.NullOr(Schema.String),
  enabledEvents: Schema.Array(Schema.String),
  hasSecret: Schema.Boolean
}).annotate({ identifier: "WebhookSettings" })

// Times go out as ISO 8601 text.
export const Delivery = jsonOf(DeliveryView).mapFields(Struct.evolve({ attempts: () => Schema.Array(jsonOf(DeliveryAttempt)) }))
  .annotate({ identifier: "WebhookDelivery" })

export const WebhooksGroup = HttpApiGroup.make("webhooks")
  .add(
    HttpApiEndpoint.get("getSettings", "/api/dashboard/webhook-settings", { query: LivemodeQuery, success: SettingsView, error: BadRequest })
      .annotate(OpenApi.Summary, "Get webhook settings"),
    HttpApiEndpoint.put("putSettings", "/api/dashboard/webhook-settings", {
      query: LivemodeQuery,
      payload: Schema.Struct({
        url: Schema.NullOr(text(2048)).annotate({ message: "must be a string or null" }).annotateKey({ messageMissingKey: "is required" }),
        enabledEvents: Schema.optionalKey(Schema.Array(EventName).annotate({ message: "must be an array" })),
        hasSecret: Schema.optionalKey(
          Schema.Boolean.annotate({ message: "must be a boolean", description: "Read-only: a PUT may send back the value a GET answered" })
        )
      }).annotate({ message: "must be a JSON object" }),
      success: SettingsView,
      error: BadRequest
    }).annotate(OpenApi.Summary, "Save webhook settings"),
    HttpApiEndpoint.post("rotateSecret", "/api/dashboard/webhook-settings/secret", {
      query: LivemodeQuery,
      success: Schema.Struct({ secret: Schema.String }).pipe(HttpApiSchema.status(201)),
      error: BadRequest
    }).annotate(OpenApi.Summary, "Rotate the webhook signing secret"),
    HttpApiEndpoint.post("sendTest", "/api/dashboard/webhook-settings/test", {
      query: LivemodeQuery,
      error: BadRequest,
      success: Schema.Struct({
        ok: Schema.Boolean,
        statusCode: Schema.NullOr(Schema.Number),
        durationMs: Schema.Number,
        error: Schema.NullOr(Schema.String),
        responseExcerpt: Schema.NullOr(Schema.String)
      })
    }).annotate(OpenApi.Summary, "Send a test webhook").annotate(OpenApi.Description,
      "Sends a signed webhook_test event ({\"event\":\"webhook_test\",\"livemode\":true,\"invoice\":null}) to the configured URL (of the mode the livemode field names) now and answers what the endpoint replied; nothing is recorded in the delivery log."),
    HttpApiEndpoint.get("listDeliveries", "/api/dashboard/webhook-deliveries", {
      query: {
        ...LivemodeQuery,
        q: Schema.optionalKey(Schema.String),
        status: Schema.optionalKey(DeliveryStatus.annotate({ message: "must be one of pending, delivered, failed" })),
        event: Schema.optionalKey(EventName),
        cursor: Schema.optionalKey(Schema.String),
        limit: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^(?:[1-9]\d?|1\d\d|200)$/, { message: "must be a number from 1 to 200" }))),
        ...LivemodeQuery
      },
      success: Schema.Struct({ deliveries: Schema.Array(Delivery), nextCursor: Schema.NullOr(Schema.String) }),
      error: BadRequest
    }).annotate(OpenApi.Summary, "List webhook deliveries").annotate(OpenApi.Description,
      "The deliveries of the account's live invoices' events (of its test invoices' with livemode=false), newest first."),
    HttpApiEndpoint.post("redeliver", "/api/dashboard/webhook-deliveries/:id/redeliver", {
      params: Schema.Struct({ id: UuidParam }),
      success: Delivery,
      error: NotFound
    }).annotate(OpenApi.Summary, "Redeliver a webhook")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(
    OpenApi.Description,
    "Webhook destination, signing secret (shown once), and the searchable delivery log, once per mode: `livemode=false` selects the test mode's settings and deliveries."
  )

/** The webhooks feature's HTTP errors, each declared once with its status and message (the endpoints above list their statuses). */
export const WebhookErrors = {
  hasSecretReadOnly: () =>
    new BadRequest({ error: "hasSecret is read-only and cannot be changed here: POST /api/dashboard/webhook-settings/secret creates or rotates the secret" }),
  /** The destination URL refused (the reason names why; see Destination.ts). */
  invalidUrl: (reason: string) => new BadRequest({ error: reason }),
  deliveryNotFound: () => new NotFound({ error: "Delivery not found" })
} as const
