import { type HttpApi, type HttpApiGroup, OpenApi } from "effect/http-api"
import { TooManyRequests } from "./http/ApiErrors.ts"
import { AuthGroup, KeysGroup } from "./accounts/AccountsApi.ts"
import { DashboardInvoicesGroup } from "./dashboard/DashboardInvoicesApi.ts"
import { DevSimulatorGroup } from "./simulator/DevSimulatorApi.ts"
import { MerchantGroup } from "./invoices/InvoicesApi.ts"
import { TestHelpersGroup } from "./testmode/TestHelpersApi.ts"
import { PublicGroup } from "./pay/PublicApi.ts"
import { CheckoutSettingsGroup } from "./payments/CheckoutSettingsApi.ts"
import { UnmatchedDepositsGroup } from "./deposits/UnmatchedDepositsApi.ts"
import { HealthGroup } from "./ops/HealthApi.ts"
import { ChainWatchersGroup } from "./ops/ChainWatchersApi.ts"
import { SweepsGroup } from "./sweeps/SweepsApi.ts"
import { WebhooksGroup } from "./webhooks/WebhooksApi.ts"
import { DashboardRefundsGroup, PublicRefundsGroup } from "./refunds/RefundsApi.ts"
import { checkoutApi } from "./http/CheckoutApi.ts"
import { documentOpenApi, withWebhooks } from "./http/OpenApiDocs.ts"
import { WebhookEventsApi } from "./webhooks/WebhookPayloads.ts"

/** The API's title, version, licence and webhooks in its OpenAPI document. */
const documented = <Groups extends HttpApiGroup.Constraint>(api: HttpApi.HttpApi<"checkout", Groups>) =>
  api
    .annotate(OpenApi.Title, "Checkout invoicing API")
    .annotate(OpenApi.Version, "1.0.0")
    .annotate(OpenApi.License, { name: "Proprietary", identifier: "LicenseRef-Proprietary" })
    .annotate(OpenApi.Transform, (spec) => withWebhooks(documentOpenApi(spec), OpenApi.fromApi(WebhookEventsApi)))

/** The groups before and after the development simulator's, in the OpenAPI document's order. */
const leadingGroups = [MerchantGroup, TestHelpersGroup, PublicGroup, AuthGroup, KeysGroup, DashboardInvoicesGroup] as const
const trailingGroups = [
  CheckoutSettingsGroup,
  WebhooksGroup,
  HealthGroup,
  ChainWatchersGroup,
  UnmatchedDepositsGroup,
  SweepsGroup,
  PublicRefundsGroup,
  DashboardRefundsGroup
] as const

export const Api = documented(checkoutApi(...leadingGroups, DevSimulatorGroup, ...trailingGroups))

/** The API a production process serves: the development simulator's group is not mounted at all (issue #54 item 3). */
export const ProductionApi = documented(checkoutApi(...leadingGroups, ...trailingGroups))

export { TooManyRequests }
