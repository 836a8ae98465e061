import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, NotFound } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { InvoiceIdParams, text } from "../http/RequestSchemas.ts"
import { InvoiceView, PaymentView } from "../domain/InvoiceResponses.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

const required = { messageMissingKey: "is required" }
const Confirmations = Schema.Finite.annotate({ message: "must be a number" }).check(
  Schema.isInt({ message: "must be an integer" }),
  Schema.isGreaterThanOrEqualTo(0, { message: "must be at least 0" }),
  Schema.isLessThanOrEqualTo(1_000_000, { message: "must be at most 1000000" })
)

const Result = Schema.Struct({ payment: PaymentView, invoice: InvoiceView })

/** Development only (absent in production): walk an invoice through its life without a chain. */
export const DevSimulatorGroup = HttpApiGroup.make("dev")
  .add(
    HttpApiEndpoint.post("simulatePayment", "/api/dev/invoices/:id/simulate-payment", {
      params: InvoiceIdParams,
      payload: Schema.Struct({
        paymentOptionId: text(64).annotateKey(required),
        amount: Schema.String.annotate({ message: "must be a decimal string" }).check(
          Schema.isPattern(/^\d{1,40}(\.\d{1,40})?$/, { message: "must be a decimal string such as \"12.5\" (at most 40 digits before and after the point)" })
        ).annotateKey(required),
        confirmations: Schema.optionalKey(Confirmations),
        transactionHash: Schema.optionalKey(text(200)),
        late: Schema.optionalKey(Schema.Boolean.annotate({ message: "must be a boolean" })),
        payerAddress: Schema.optionalKey(text(200).annotate({ description: "Who paid (the sender a watcher would see)" }))
      }),
      success: Result,
      error: [BadRequest, NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Simulate a payment (development)"),
    HttpApiEndpoint.post("simulateConfirmations", "/api/dev/invoices/:id/simulate-confirmations", {
      params: InvoiceIdParams,
      payload: Schema.Struct({ transactionHash: text(200).annotateKey(required), confirmations: Confirmations.annotateKey(required) }),
      success: Result,
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Simulate confirmations (development)"),
    HttpApiEndpoint.post("simulateInvalidation", "/api/dev/invoices/:id/simulate-invalidation", {
      params: InvoiceIdParams,
      payload: Schema.Struct({ transactionHash: text(200).annotateKey(required), reason: Schema.optionalKey(text(200)) }),
      success: Result,
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Simulate an invalidation (development)"),
    HttpApiEndpoint.post("simulateExpiry", "/api/dev/invoices/:id/simulate-expiry", {
      params: InvoiceIdParams,
      success: InvoiceView,
      error: NotFound
    }).annotate(OpenApi.Summary, "Simulate expiry (development)")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(OpenApi.Description, "Development simulator (not served in production): feeds evidence through the chain watchers' entry point.")
