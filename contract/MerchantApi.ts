import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { checkoutApi } from "./CheckoutApi.ts"
import { BadGateway, BadRequest, Conflict, Forbidden, NotFound, ServiceUnavailable } from "./ApiErrors.ts"
import { MerchantAuthentication } from "./Authentication.ts"
import { BodyRules, paymentTimingRules } from "./BodyRules.ts"
import { CreateInvoiceBody, InvoiceIdParams, RecordPaymentBody, VoidBody } from "./RequestSchemas.ts"
import { InvoiceStatusView, InvoiceView } from "./InvoiceResponses.ts"
import { TestHelpersGroup } from "./TestHelpersApi.ts"

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
      error: [BadRequest, Forbidden, NotFound, Conflict, BadGateway, ServiceUnavailable]
    }).annotate(OpenApi.Summary, "Create an invoice").annotate(BodyRules, paymentTimingRules),
    HttpApiEndpoint.get("detail", "/api/checkout/invoices/:id", {
      params: InvoiceIdParams,
      success: InvoiceView,
      error: NotFound
    }).annotate(OpenApi.Summary, "Retrieve an invoice"),
    HttpApiEndpoint.get("status", "/api/checkout/invoices/:id/status", {
      params: InvoiceIdParams,
      success: InvoiceStatusView,
      error: NotFound
    }).annotate(OpenApi.Summary, "Poll an invoice's status"),
    HttpApiEndpoint.post("void", "/api/checkout/invoices/:id/void", {
      params: InvoiceIdParams,
      payload: VoidBody,
      headers: IdempotencyHeaders,
      success: InvoiceView,
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Void an unpaid invoice"),
    HttpApiEndpoint.post("recordPayment", "/api/checkout/invoices/:id/record-payment", {
      params: InvoiceIdParams,
      payload: RecordPaymentBody,
      headers: IdempotencyHeaders,
      success: InvoiceView,
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Record a payment made outside the chain")
  )
  .middleware(MerchantAuthentication)
  .annotate(OpenApi.Description, "Merchant endpoints: authenticate with the X-Api-Key header (server-side only).")

/** The merchant endpoints and the test helpers as an API of their own: what an HttpApiClient (the SDK's Effect client) is made from. */
export const MerchantApi = checkoutApi(MerchantGroup, TestHelpersGroup)
