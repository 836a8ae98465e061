import { HttpApi, OpenApi } from "effect/http-api"
import { TooManyRequests } from "./ApiErrors.ts"
import { AuthGroup, KeysGroup } from "../accounts/AccountsApi.ts"
import { DashboardInvoicesGroup } from "../invoices/DashboardInvoicesApi.ts"
import { DevSimulatorGroup } from "../invoices/DevSimulatorApi.ts"
import { MerchantGroup, PublicGroup } from "../invoices/InvoicesApi.ts"
import { CheckoutSettingsGroup } from "../payments/CheckoutSettingsApi.ts"
import { UnmatchedDepositsGroup } from "../deposits/UnmatchedDepositsApi.ts"
import { HealthGroup } from "../health/HealthApi.ts"
import { ChainWatchersGroup } from "../monitoring/ChainWatchersApi.ts"
import { SweepsGroup } from "../sweeps/SweepsApi.ts"
import { WebhooksGroup } from "../webhooks/WebhooksApi.ts"
import { documentOpenApi } from "./OpenApiDocs.ts"
import { SchemaErrors } from "./SchemaErrors.ts"

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
