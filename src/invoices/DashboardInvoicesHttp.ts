import { Effect } from "effect"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../accounts/CurrentMerchant.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView } from "../domain/InvoiceViews.ts"
import { Api } from "../http/Api.ts"
import { mapDomainErrors } from "../http/ErrorMapping.ts"
import { Invoices } from "./Invoices.ts"

export const DashboardInvoicesHttpLive = HttpApiBuilder.group(Api, "dashboardInvoices", (handlers) =>
  Effect.gen(function*() {
    const invoices = yield* Invoices
    const { publicUrl } = yield* AppConfig
    return handlers.handle("closeException", ({ params, payload }) =>
      Effect.gen(function*() {
        const merchant = yield* CurrentMerchant
        const parts = yield* mapDomainErrors(invoices.closeException(merchant.merchantId, params.id, payload.action, payload.note))
        return merchantInvoiceView(parts, publicUrl)
      }))
  }))
