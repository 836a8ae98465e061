import { Schema } from "effect"
import { HttpApi, HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadGateway, Conflict, Forbidden, NotFound, ServiceUnavailable, TooManyRequests } from "./ApiErrors.ts"
import { AuthGroup, KeysGroup } from "../accounts/AccountsApi.ts"
import { DashboardInvoicesGroup } from "../invoices/DashboardInvoicesApi.ts"
import { DevSimulatorGroup } from "../invoices/DevSimulatorApi.ts"
import { CheckoutSettingsGroup } from "../payments/CheckoutSettingsApi.ts"
import { UnmatchedDepositsGroup } from "../deposits/UnmatchedDepositsApi.ts"
import { HealthGroup } from "../health/HealthApi.ts"
import { ChainWatchersGroup } from "../monitoring/ChainWatchersApi.ts"
import { SweepsGroup } from "../sweeps/SweepsApi.ts"
import { WebhooksGroup } from "../webhooks/WebhooksApi.ts"
import { MerchantAuthentication } from "./Authentication.ts"
import { documentOpenApi } from "./OpenApiDocs.ts"
import { CreateInvoiceBody, InvoiceIdParams, PrepareSolanaWalletPaymentBody, RecordPaymentBody, VoidBody } from "./RequestSchemas.ts"
import { Invoice, InvoiceStatusPayload, PublicInvoice, PublicInvoiceStatusPayload, SolanaWalletPayment } from "./ResponseSchemas.ts"
import { SchemaErrors } from "./SchemaErrors.ts"

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
      success: Invoice.pipe(HttpApiSchema.status(201)),
      error: [Forbidden, NotFound, Conflict, BadGateway, ServiceUnavailable]
    }),
    HttpApiEndpoint.get("detail", "/api/checkout/invoices/:id", {
      params: InvoiceIdParams,
      success: Invoice,
      error: NotFound
    }),
    HttpApiEndpoint.get("status", "/api/checkout/invoices/:id/status", {
      params: InvoiceIdParams,
      success: InvoiceStatusPayload,
      error: NotFound
    }),
    HttpApiEndpoint.post("void", "/api/checkout/invoices/:id/void", {
      params: InvoiceIdParams,
      payload: VoidBody,
      headers: IdempotencyHeaders,
      success: Invoice,
      error: [NotFound, Conflict]
    }),
    HttpApiEndpoint.post("recordPayment", "/api/checkout/invoices/:id/record-payment", {
      params: InvoiceIdParams,
      payload: RecordPaymentBody,
      headers: IdempotencyHeaders,
      success: Invoice,
      error: [NotFound, Conflict]
    })
  )
  .middleware(MerchantAuthentication)
  .annotate(OpenApi.Description, "Merchant endpoints: authenticate with the X-Api-Key header (server-side only).")

export const PublicGroup = HttpApiGroup.make("public")
  .add(
    HttpApiEndpoint.get("invoice", "/api/checkout/pay/:id", {
      params: InvoiceIdParams,
      success: PublicInvoice,
      error: NotFound
    }),
    HttpApiEndpoint.get("status", "/api/checkout/pay/:id/status", {
      params: InvoiceIdParams,
      success: PublicInvoiceStatusPayload,
      error: NotFound
    }),
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

export const Api = HttpApi.make("checkout")
  .add(MerchantGroup, PublicGroup, AuthGroup, KeysGroup, DashboardInvoicesGroup, DevSimulatorGroup, CheckoutSettingsGroup, WebhooksGroup)
  .add(HealthGroup, ChainWatchersGroup, UnmatchedDepositsGroup, SweepsGroup)
  .middleware(SchemaErrors)
  // Unknown body fields answer 400 `<field> is not a known field`; headers, path and query keep the defaults.
  .annotate(HttpApi.PayloadParseOptions, { onExcessProperty: "error" })
  .annotate(OpenApi.Title, "Checkout invoicing API")
  .annotate(OpenApi.Version, "1.0.0")
  .annotate(OpenApi.Transform, documentOpenApi)

export { TooManyRequests }
