import { Clock, Context, Effect, Layer, Stream } from "effect"
import { SqlClient } from "effect/sql"
import { AppConfig } from "../config/AppConfig.ts"
import type { ExceptionCloseAction } from "../domain/Statuses.ts"
import { merchantInvoiceView } from "../domain/InvoiceViews.ts"
import { csvHeader, csvRow } from "../invoices/InvoiceCsv.ts"
import { type InvoiceFilters, invoiceDeliveryIds, invoiceTimeline, listInvoices, streamInvoices } from "../invoices/InvoiceList.ts"
import { invoiceQuotes, quoteView } from "../invoices/InvoiceQuoteRepo.ts"
import { Invoices } from "../invoices/Invoices.ts"
import { closeActionsAccepted } from "../lifecycle/Lifecycle.ts"
import { findDelivery } from "../webhooks/DeliveryLog.ts"
import { overviewStart, overviewView } from "./Overview.ts"
import { OverviewRepo } from "./OverviewRepo.ts"
import type { MerchantId } from "../domain/Ids.ts"

const makeDashboardInvoices = Effect.gen(function*() {
  const invoices = yield* Invoices
  const overviews = yield* OverviewRepo
  const sql = yield* SqlClient.SqlClient
  const { publicUrl } = yield* AppConfig
  const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))

  const detail = Effect.fn("DashboardInvoices.detail")(function*(merchantId: MerchantId, id: string) {
    const parts = yield* invoices.get(merchantId, id)
    const timeline = yield* invoiceTimeline(id)
    const ids = yield* invoiceDeliveryIds(merchantId, id)
    // A delivery id the invoice's log just listed is found, or the database broke.
    const deliveries = yield* Effect.forEach(ids, (deliveryId) => findDelivery(merchantId, deliveryId).pipe(Effect.catchTag("DeliveryNotFound", Effect.die)))
    const quotes = yield* invoiceQuotes(id)
    const invoice = merchantInvoiceView(parts, publicUrl, yield* now)
    return { invoice, closeActions: closeActionsAccepted(invoice), timeline, deliveries, quotes: quotes.map(quoteView) }
  }, Effect.provideService(SqlClient.SqlClient, sql))

  const list = (merchantId: MerchantId, filters: InvoiceFilters & { readonly cursor?: string | undefined; readonly limit: number }) =>
    listInvoices(merchantId, filters).pipe(
      // The list holds the mode asked for only (InvoiceListRepo filters on it), so each invoice's livemode is that mode.
      Effect.map((page) => ({
        ...page,
        invoices: page.invoices.map((invoice) => ({ ...invoice, livemode: filters.livemode, closeActions: closeActionsAccepted(invoice) }))
      })),
      Effect.provideService(SqlClient.SqlClient, sql)
    )

  return {
    detail,
    list,
    exportCsv: (merchantId: MerchantId, filters: InvoiceFilters) =>
      streamInvoices(merchantId, filters).pipe(
        Stream.map(csvRow),
        Stream.prepend([csvHeader()]),
        Stream.encodeText,
        Stream.provideService(SqlClient.SqlClient, sql)
      ),
    overview: Effect.fn("DashboardInvoices.overview")(function*(merchantId: MerchantId, livemode: boolean) {
      const at = yield* now
      return overviewView(yield* overviews.overview(merchantId, overviewStart(at), livemode), at)
    }),
    closeException: Effect.fn("DashboardInvoices.closeException")(function*(merchantId: MerchantId, id: string, action: ExceptionCloseAction, note: string) {
      const parts = yield* invoices.closeException(merchantId, id, action, note)
      return merchantInvoiceView(parts, publicUrl, yield* now)
    })
  }
})

/**
 * The dashboard's invoice pages: the list, its CSV export, the overview's sums, an invoice's detail
 * (timeline, webhook deliveries, quotes) and closing an exception, in the merchant view.
 */
export class DashboardInvoices extends Context.Service<DashboardInvoices, Effect.Success<typeof makeDashboardInvoices>>()("Dashboard/DashboardInvoices") {
  static readonly layer = Layer.effect(DashboardInvoices, makeDashboardInvoices).pipe(Layer.provide([Invoices.layer, OverviewRepo.layer]))
}
