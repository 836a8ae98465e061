import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import type { InvoiceRecord } from "../domain/Invoice.ts"
import { WebhookInvoiceView } from "../domain/InvoiceResponses.ts"
import { webhookInvoiceView } from "../domain/InvoiceViews.ts"
import { REFUND_WEBHOOK_EVENT_NAMES, WEBHOOK_EVENT_NAMES, type WebhookEventName } from "../domain/Statuses.ts"
import { type RefundRecord, RefundView, refundView } from "../refunds/Refund.ts"

/**
 * The requests the service sends to a merchant's webhook URL, declared as an HttpApi of their own
 * (never served): the OpenAPI document's `webhooks` section is generated from it (http/OpenApiDocs.ts),
 * so each event's body is the schema the dispatcher's views follow.
 */

const encodeInvoice = Schema.encodeSync(WebhookInvoiceView)
const encodeRefund = Schema.encodeSync(RefundView)

/** A body's `invoice` as sent: the invoice's webhook view, encoded by its schema (the one the `webhooks` section documents). */
export const webhookInvoiceJson = (invoice: InvoiceRecord) => encodeInvoice(webhookInvoiceView(invoice))
/** A refund event's `refund` as sent: the merchant's view of the refund, encoded by its schema. */
export const webhookRefundJson = (refund: RefundRecord) => encodeRefund(refundView(refund))

/** When each event is sent: the summary of its entry in the `webhooks` section. */
const SENT_WHEN: Readonly<Record<WebhookEventName | "webhook_test", string>> = {
  invoice_created: "Invoice created",
  invoice_partially_paid: "Some payment detected, the total below the required amount",
  invoice_payment_detected: "Sufficient payment detected, below the confirmation threshold",
  invoice_confirmed: "Sufficient detected funds reached the confirmation threshold",
  invoice_expired: "The final payable deadline elapsed before sufficient payment",
  invoice_voided: "Invoice voided before payment was detected",
  invoice_payment_recorded: "A payment outside the chain was recorded (paid_out_of_band)",
  invoice_exception_opened: "An exception was opened for the merchant's review",
  invoice_exception_closed: "The merchant closed an open exception",
  refund_requested: "A payer requested a refund (opt-in event)",
  refund_completed: "A refund transfer reached its required confirmations (opt-in event)",
  refund_rejected: "A refund was rejected by the merchant or by an invalidation (opt-in event)",
  webhook_test: "The dashboard's \"send a test event\": no invoice"
}

const PascalCase = (event: string) => event.split("_").map((word) => word[0].toUpperCase() + word.slice(1)).join("")

const headersOf = (event: string) => ({
  "X-Checkout-Signature": Schema.String.annotate({
    description: "Lowercase hex HMAC-SHA256 (64 characters) of the raw body under the webhook signing secret. Verify it before anything else."
  }),
  "X-Checkout-Event": Schema.Literal(event).annotate({ description: "The event name, as in the body's `event`." }),
  "X-Checkout-Delivery": Schema.String.annotate({
    description: "The event's id, to de-duplicate on: the same on every attempt of this delivery (retries and redeliveries from the dashboard), and " +
      "the same when the event is written again after a restore from a backup (hashed from the invoice, the event name and its occurrence); " +
      "also finds it in the dashboard's delivery log."
  })
})

/** Every body's `livemode`: false for a test invoice's event, sent only to the test settings' URL and signed with the test secret. */
const Livemode = Schema.Boolean.annotate({
  description: "false for an event of a test invoice (created with a test API key): sent only to the test webhook URL, signed with the test secret."
})

/** The body of a lifecycle event: `{event, livemode, invoice}`. */
export const invoiceEventBody = (event: string) =>
  Schema.Struct({ event: Schema.Literal(event), livemode: Livemode, invoice: WebhookInvoiceView }).annotate({ identifier: `${PascalCase(event)}Event` })

/** The body of a refund event: `{event, livemode, invoice, refund}`. */
export const refundEventBody = (event: string) =>
  Schema.Struct({ event: Schema.Literal(event), livemode: Livemode, invoice: WebhookInvoiceView, refund: RefundView }).annotate({
    identifier: `${PascalCase(event)}Event`
  })

/** The dashboard's test event: `{event: "webhook_test", livemode, invoice: null}`. */
export const TestEventBody = Schema.Struct({ event: Schema.Literal("webhook_test"), livemode: Livemode, invoice: Schema.Null }).annotate({
  identifier: "WebhookTestEvent"
})

/** Any 2xx within 10 seconds acknowledges; anything else is retried after 1, 5 and 15 minutes. */
const Acknowledged = HttpApiSchema.Empty(200).annotate({
  description: "Any 2xx answer within 10 seconds acknowledges the delivery; another status, a redirect or a time-out fails it and it is retried after 1, 5 and 15 minutes."
})

const eventEndpoint = (event: string, payload: Schema.Top) =>
  HttpApiEndpoint.post(event, `/${event}`, { payload, headers: headersOf(event), success: Acknowledged }).annotate(OpenApi.Summary, SENT_WHEN[event as WebhookEventName])

export const WebhookEventsApi = HttpApi.make("webhooks").add(
  HttpApiGroup.make("webhookEvents").add(
    eventEndpoint("webhook_test", TestEventBody),
    ...WEBHOOK_EVENT_NAMES.map((event) => eventEndpoint(event, invoiceEventBody(event))),
    ...REFUND_WEBHOOK_EVENT_NAMES.map((event) => eventEndpoint(event, refundEventBody(event)))
  )
)
