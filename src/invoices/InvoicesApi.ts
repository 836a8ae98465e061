import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadGateway, Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests } from "../http/ApiErrors.ts"
import { MerchantAuthentication } from "../http/Authentication.ts"
import { CreateInvoiceBody, InvoiceIdParams, PrepareSolanaWalletPaymentBody, RecordPaymentBody, VoidBody } from "../http/RequestSchemas.ts"
import { InvoiceStatusView, InvoiceView, PublicInvoiceStatusView, PublicInvoiceView, SolanaWalletPayment } from "./InvoiceResponses.ts"

const IdempotencyHeaders = {
  "idempotency-key": Schema.optionalKey(Schema.String).annotate({
    description: "1-255 characters. The same key and body replay the first outcome for 24 hours."
  })
}

export const MerchantGroup = HttpApiGroup.make("merchant")
  .add(
    HttpApiEndpoint.post("create", "/api/checkout/invoices", {
      payload: CreateInvoiceBody,
      headers: IdempotencyHeaders,
      success: InvoiceView.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, NotFound, Conflict, BadGateway, ServiceUnavailable]
    }),
    HttpApiEndpoint.get("detail", "/api/checkout/invoices/:id", {
      params: InvoiceIdParams,
      success: InvoiceView,
      error: NotFound
    }),
    HttpApiEndpoint.get("status", "/api/checkout/invoices/:id/status", {
      params: InvoiceIdParams,
      success: InvoiceStatusView,
      error: NotFound
    }),
    HttpApiEndpoint.post("void", "/api/checkout/invoices/:id/void", {
      params: InvoiceIdParams,
      payload: VoidBody,
      headers: IdempotencyHeaders,
      success: InvoiceView,
      error: [NotFound, Conflict]
    }),
    HttpApiEndpoint.post("recordPayment", "/api/checkout/invoices/:id/record-payment", {
      params: InvoiceIdParams,
      payload: RecordPaymentBody,
      headers: IdempotencyHeaders,
      success: InvoiceView,
      error: [NotFound, Conflict]
    })
  )
  .middleware(MerchantAuthentication)
  .annotate(OpenApi.Description, "Merchant endpoints: authenticate with the X-Api-Key header (server-side only).")

export const PublicGroup = HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("invoice", "/api/checkout/pay/:id", {
      params: InvoiceIdParams,
      success: PublicInvoiceView,
      error: NotFound
    }),
    HttpApiEndpoint.get("status", "/api/checkout/pay/:id/status", {
      params: InvoiceIdParams,
      success: PublicInvoiceStatusView,
      error: NotFound
    }),
    HttpApiEndpoint.get("statusEvents", "/api/checkout/pay/:id/events", {
      params: InvoiceIdParams,
      headers: {
        "last-event-id": Schema.optionalKey(Schema.String).annotate({
          description: "The id of the last event received (EventSource sends it on reconnect): the current status is sent only if it changed since."
        })
      },
      success: HttpApiSchema.StreamSse({ data: PublicInvoiceStatusView }),
      error: [NotFound, TooManyRequests]
    }).annotate(
      OpenApi.Description,
      "Server-Sent Events of the public status (the fields of GET /api/checkout/pay/:id/status), for the payer page instead of polling. The first `status` event is the current status, then one per change; each has an id (a digest of the status), and a reconnect with Last-Event-ID gets the status only if it changed since. A `: heartbeat` comment every 15 s keeps proxies from closing the stream. The stream ends after the event of a final status for the page (confirmed, paid_out_of_band, expired, voided); a reconnect that already holds it answers 204. At most 16 open streams per client address (429 beyond)."
    ),
    HttpApiEndpoint.post("prepareSolanaWalletPayment", "/api/checkout/pay/:id/prepare-solana-wallet-payment", {
      params: InvoiceIdParams,
      payload: PrepareSolanaWalletPaymentBody,
      success: SolanaWalletPayment,
      error: [NotFound, Conflict, TooManyRequests, ServiceUnavailable]
    }).annotate(
      OpenApi.Description,
      "An unsigned Solana Pay transfer of what remains due, for the payer's wallet to sign and send. Limited per client IP (CHECKOUT_SOLANA_PREPARE_RATE_LIMIT a minute)."
    )
  )
  .annotate(OpenApi.Description, "Public payment page endpoints: no authentication, no merchant-only data; CORS open to any origin (no credentials).")
