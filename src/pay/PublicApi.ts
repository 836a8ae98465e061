import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { PAYER_KEY_MESSAGE, payerKeyBytes } from "../chains/solana/PayerKey.ts"
import { PublicInvoiceStatusView, PublicInvoiceView, SolanaWalletPayment } from "../domain/InvoiceResponses.ts"
import { BadRequest, Conflict, NotFound, ServiceUnavailable, TooManyRequests } from "../http/ApiErrors.ts"
import { InvoiceIdParams } from "../http/RequestSchemas.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

export const PrepareSolanaWalletPaymentBody = Schema.Struct({
  paymentOptionId: Schema.String.annotate({ message: "must be a string" }).check(
    Schema.isUUID(undefined, { message: "must be a valid UUID" })
  ),
  payerPublicKey: Schema.String.annotate({ message: "must be a string" }).check(
    Schema.makeFilter<string>((value) => payerKeyBytes(value) !== undefined, { message: PAYER_KEY_MESSAGE })
  )
}).annotate({ identifier: "PrepareSolanaWalletPayment" })

export const SimulateTestPaymentBody = Schema.Struct({
  kind: Schema.Literals(["full", "partial"]).annotate({ message: "must be \"full\" or \"partial\"" }),
  paymentOptionId: Schema.optionalKey(
    Schema.String.annotate({ message: "must be a string" }).check(Schema.isUUID(undefined, { message: "must be a valid UUID" }))
  )
}).annotate({ identifier: "SimulateTestPayment" })

export const PublicGroup = HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("invoice", "/api/checkout/pay/:id", {
      params: InvoiceIdParams,
      success: PublicInvoiceView,
      error: NotFound
    }).annotate(OpenApi.Summary, "Payer view of an invoice"),
    HttpApiEndpoint.get("status", "/api/checkout/pay/:id/status", {
      params: InvoiceIdParams,
      success: PublicInvoiceStatusView,
      error: NotFound
    }).annotate(OpenApi.Summary, "Payer view of an invoice's status"),
    HttpApiEndpoint.get("statusEvents", "/api/checkout/pay/:id/events", {
      params: InvoiceIdParams,
      headers: {
        "last-event-id": Schema.optionalKey(Schema.String).annotate({
          description: "The id of the last event received (EventSource sends it on reconnect): the current status is sent only if it changed since."
        })
      },
      success: HttpApiSchema.StreamSse({ data: PublicInvoiceStatusView }),
      error: [NotFound, TooManyRequests]
    }).annotate(OpenApi.Summary, "Stream an invoice's status (server-sent events)").annotate(
      OpenApi.Description,
      "Server-Sent Events of the public status (the fields of GET /api/checkout/pay/:id/status), for the payer page instead of polling. The first `status` event is the current status, then one per change; each has an id (a digest of the status), and a reconnect with Last-Event-ID gets the status only if it changed since. A `: heartbeat` comment every 15 s keeps proxies from closing the stream. The stream ends after the event of a final status for the page (confirmed, paid_out_of_band, expired, voided); a reconnect that already holds it answers 204. At most 16 open streams per client address (429 beyond)."
    ),
    HttpApiEndpoint.post("prepareSolanaWalletPayment", "/api/checkout/pay/:id/prepare-solana-wallet-payment", {
      params: InvoiceIdParams,
      payload: PrepareSolanaWalletPaymentBody,
      success: SolanaWalletPayment,
      error: [BadRequest, NotFound, Conflict, TooManyRequests, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Prepare an unsigned Solana wallet payment").annotate(
      OpenApi.Description,
      "An unsigned Solana Pay transfer of what remains due, for the payer's wallet to sign and send. Limited per client IP (CHECKOUT_SOLANA_PREPARE_RATE_LIMIT a minute)."
    ),
    HttpApiEndpoint.post("simulateTestPayment", "/api/checkout/pay/:id/simulate-payment", {
      params: InvoiceIdParams,
      payload: SimulateTestPaymentBody,
      success: PublicInvoiceStatusView,
      error: [BadRequest, NotFound, Conflict, TooManyRequests]
    }).annotate(OpenApi.Summary, "Simulate a payment of a test invoice").annotate(
      OpenApi.Description,
      "Test invoices only (404 for a live invoice): the payer page's \"Simulate payment\". `full` pays what remains through the chosen option (`paymentOptionId`, else the option already paid into, else the default) and `partial` half of it, each with the network's required confirmations; no funds move. Answers the public status after it. Limited per client IP like the Solana preparation (CHECKOUT_SOLANA_PREPARE_RATE_LIMIT a minute)."
    )
  )
  .annotate(OpenApi.Description, "Public payment page endpoints: no authentication, no merchant-only data; CORS open to any origin (no credentials).")
  .middleware(DatabaseGate)

/** The public payment endpoints' own HTTP errors, declared once with their status and message (the endpoints above list their statuses). */
export const PayErrors = {
  tooManyStatusStreams: (max: number) => new TooManyRequests({ error: `At most ${max} open status streams per client address; close one or poll the status` }),
  testPaymentRefused: (message: string) => new Conflict({ error: message }),
  testPaymentOptionUnknown: () => new BadRequest({ error: "paymentOptionId is not an option of this invoice" })
} as const
