import { Effect, Layer } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { livemodeOf } from "../http/LivemodeQuery.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { DashboardInvoicesGroup } from "./DashboardInvoicesApi.ts"
import { mapDomainErrors, RequestErrors } from "../http/ApiErrors.ts"
import type { InvoiceFilters } from "../invoices/InvoiceList.ts"
import { DashboardInvoices } from "./DashboardInvoices.ts"

const filtersOf = (query: {
  readonly status?: string
  readonly exceptionStatus?: string
  readonly exceptionType?: string
  readonly createdFrom?: string
  readonly createdTo?: string
  readonly q?: string
  readonly livemode?: "true" | "false"
}): InvoiceFilters => ({
  livemode: livemodeOf(query),
  status: query.status,
  exceptionStatus: query.exceptionStatus,
  exceptionType: query.exceptionType,
  createdFrom: query.createdFrom === undefined ? undefined : new Date(query.createdFrom),
  createdTo: query.createdTo === undefined ? undefined : new Date(query.createdTo),
  q: query.q
})

export const DashboardInvoicesHttpLive = HttpApiBuilder.group(checkoutApi(DashboardInvoicesGroup), "dashboardInvoices", (handlers) =>
  Effect.gen(function*() {
    const dashboard = yield* DashboardInvoices
    return handlers
      .handle("closeException", ({ params, payload }) =>
        Effect.flatMap(CurrentMerchant, (merchant) => mapDomainErrors(dashboard.closeException(merchant.merchantId, params.id, payload.action, payload.note))))
      .handle("overview", ({ query }) => Effect.flatMap(CurrentMerchant, (merchant) => dashboard.overview(merchant.merchantId, livemodeOf(query))))
      .handle("list", ({ query }) =>
        Effect.flatMap(CurrentMerchant, (merchant) =>
          dashboard.list(merchant.merchantId, { ...filtersOf(query), cursor: query.cursor, limit: query.limit === undefined ? 50 : Number(query.limit) }).pipe(
            Effect.catchTag("InvalidInvoiceCursor", () =>
              Effect.fail(RequestErrors.invalidCursor()))
          )))
      .handle("detail", ({ params }) =>
        Effect.flatMap(CurrentMerchant, (merchant) => mapDomainErrors(dashboard.detail(merchant.merchantId, params.id))))
      .handle("exportCsv", ({ query }) =>
        Effect.map(CurrentMerchant, (merchant) => {
          const day = new Date().toISOString().slice(0, 10)
          return HttpServerResponse.stream(dashboard.exportCsv(merchant.merchantId, filtersOf(query)), {
            contentType: "text/csv; charset=utf-8",
            headers: { "content-disposition": `attachment; filename="invoices-${day}.csv"` }
          })
        }))
  })).pipe(Layer.provide(DashboardInvoices.layer))
