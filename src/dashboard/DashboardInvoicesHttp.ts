import { Clock, Effect, Layer, Stream } from "effect"
import { HttpServerResponse } from "effect/http"
import { HttpApiBuilder } from "effect/http-api"
import { SqlClient } from "effect/sql"
import { CurrentMerchant } from "../http/CurrentMerchant.ts"
import { livemodeOf } from "../http/LivemodeQuery.ts"
import { AppConfig } from "../config/AppConfig.ts"
import { merchantInvoiceView } from "../domain/InvoiceViews.ts"
import { checkoutApi } from "../http/CheckoutApi.ts"
import { DashboardInvoicesGroup } from "./DashboardInvoicesApi.ts"
import { mapDomainErrors, RequestErrors } from "../http/ApiErrors.ts"
import { findDelivery } from "../webhooks/DeliveryLog.ts"
import { csvHeader, csvRow } from "../invoices/InvoiceCsv.ts"
import { type InvoiceFilters, invoiceDeliveryIds, invoiceTimeline, listInvoices, streamInvoices } from "../invoices/InvoiceList.ts"
import { invoiceQuotes, quoteView } from "../invoices/InvoiceQuoteRepo.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { overviewStart, overviewView } from "./Overview.ts"
import { OverviewRepo } from "./OverviewRepo.ts"
import { closeActionsAccepted } from "../lifecycle/Lifecycle.ts"
import type { HandlerRequest } from "../http/HandlerRequest.ts"

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

const dashboardContext = Effect.gen(function*() {
  return { invoices: yield* Invoices, sql: yield* SqlClient.SqlClient, publicUrl: (yield* AppConfig).publicUrl }
})
type Context = Effect.Success<typeof dashboardContext>
type Request<Id extends string> = HandlerRequest<typeof DashboardInvoicesGroup, Id>

const detail = (context: Context) => ({ params }: Request<"detail">) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    const parts = yield* mapDomainErrors(context.invoices.get(merchant.merchantId, params.id))
    const timeline = yield* invoiceTimeline(params.id)
    const ids = yield* invoiceDeliveryIds(merchant.merchantId, params.id)
    const deliveries = yield* Effect.forEach(ids, (id) => findDelivery(merchant.merchantId, id))
    const quotes = yield* invoiceQuotes(params.id)
    const invoice = merchantInvoiceView(parts, context.publicUrl, new Date(yield* Clock.currentTimeMillis))
    return { invoice, closeActions: closeActionsAccepted(invoice), timeline, deliveries, quotes: quotes.map(quoteView) }
  }).pipe(Effect.provideService(SqlClient.SqlClient, context.sql), Effect.catchTag("DeliveryNotFound", Effect.die))

const exportCsv = (context: Context) => ({ query }: Request<"exportCsv">) =>
  Effect.gen(function*() {
    const merchant = yield* CurrentMerchant
    const rows = streamInvoices(merchant.merchantId, filtersOf(query)).pipe(
      Stream.map(csvRow),
      Stream.prepend([csvHeader()]),
      Stream.encodeText,
      Stream.provideService(SqlClient.SqlClient, context.sql)
    )
    const day = new Date().toISOString().slice(0, 10)
    return HttpServerResponse.stream(rows, {
      contentType: "text/csv; charset=utf-8",
      headers: { "content-disposition": `attachment; filename="invoices-${day}.csv"` }
    })
  })

export const DashboardInvoicesHttpLive = HttpApiBuilder.group(checkoutApi(DashboardInvoicesGroup), "dashboardInvoices", (handlers) =>
  Effect.gen(function*() {
    const context = yield* dashboardContext
    const { invoices, sql, publicUrl } = context
    return handlers
      .handle("closeException", ({ params, payload }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const parts = yield* mapDomainErrors(invoices.closeException(merchant.merchantId, params.id, payload.action, payload.note))
          return merchantInvoiceView(parts, publicUrl, new Date(yield* Clock.currentTimeMillis))
        }))
      .handle("overview", ({ query }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const now = new Date(yield* Clock.currentTimeMillis)
          const repo = yield* OverviewRepo.make
          return overviewView(yield* repo.overview(merchant.merchantId, overviewStart(now), livemodeOf(query)), now)
        }).pipe(Effect.provideService(SqlClient.SqlClient, sql)))
      .handle("list", ({ query }) =>
        Effect.gen(function*() {
          const merchant = yield* CurrentMerchant
          const filters = filtersOf(query)
          return yield* listInvoices(merchant.merchantId, {
            ...filters,
            cursor: query.cursor,
            limit: query.limit === undefined ? 50 : Number(query.limit)
          }).pipe(
            // The list holds the mode asked for only (InvoiceListRepo filters on it), so each invoice's livemode is that mode.
            Effect.map((page) => ({
              ...page,
              invoices: page.invoices.map((invoice) => ({ ...invoice, livemode: filters.livemode, closeActions: closeActionsAccepted(invoice) }))
            })),
            Effect.provideService(SqlClient.SqlClient, sql),
            Effect.catchTag("InvalidInvoiceCursor", () => Effect.fail(RequestErrors.invalidCursor()))
          )
        }))
      .handle("detail", detail(context))
      .handle("exportCsv", exportCsv(context))
  })).pipe(Layer.provide(Invoices.layer))
