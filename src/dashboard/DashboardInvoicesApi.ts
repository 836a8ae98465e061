import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, HttpApiSchema, OpenApi } from "effect/http-api"
import { BadRequest, Conflict, NotFound } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { isStorableInstant } from "../db/TimestampRange.ts"
import { LivemodeQuery } from "../http/LivemodeQuery.ts"
import { InvoiceIdParams, requiredNote } from "../http/RequestSchemas.ts"
import { QuoteView } from "../invoices/InvoiceQuoteRepo.ts"
import { InvoiceSummaryView, InvoiceView } from "../domain/InvoiceResponses.ts"
import { ExceptionCloseAction, INVOICE_STATUSES, InvoiceStatus } from "../domain/Statuses.ts"
import { Delivery } from "../webhooks/WebhooksApi.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

export const CloseExceptionBody = Schema.Struct({
  action: Schema.Literals(["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"]).annotate({
    message: "must be one of accept_late_payment, mark_paid_out_of_band, close_unpaid"
  }).annotateKey({ messageMissingKey: "is required" }),
  note: requiredNote(2000)
}).annotate({ message: "must be a JSON object" })

const oneOf = (values: ReadonlyArray<string>) => Schema.optionalKey(Schema.Literals(values).annotate({ message: `must be one of ${values.join(", ")}` }))
const instant = Schema.optionalKey(Schema.String.check(
  Schema.makeFilter((text) => isStorableInstant(Date.parse(text)), { message: "must be an ISO 8601 date or time" })
))

/** The invoice list's and the CSV export's filters (query fields). */
export const InvoiceFilterQuery = {
  status: oneOf(INVOICE_STATUSES),
  exceptionStatus: oneOf(["open", "closed"]),
  exceptionType: oneOf(["late_payment", "partial_payment"]),
  createdFrom: instant,
  createdTo: instant,
  q: Schema.optionalKey(Schema.String.check(Schema.isMaxLength(200, { message: "must be at most 200 characters" }))),
  ...LivemodeQuery
}

/** The actions that close the invoice's open exception, by the lifecycle's own rule; empty without an open exception. */
const CloseActions = Schema.Array(ExceptionCloseAction).annotate({
  description: "The close actions the service accepts for this invoice's open exception now (none without one)"
})

/** An invoice of the dashboard's list: the summary, its mode (issue #55: every answer carrying an invoice has it), and the actions that close its exception. */
export const DashboardInvoiceSummary = Schema.Struct({
  ...InvoiceSummaryView.fields,
  livemode: Schema.Boolean.annotate({ description: "false for a test invoice (created with a test API key): listed only with livemode=false" }),
  closeActions: CloseActions
})

/** The landing view's figures: invoices by status, USD received per UTC day (30 days, oldest first), open exceptions, refunds to pay. */
export const OverviewView = Schema.Struct({
  invoicesByStatus: Schema.Array(Schema.Struct({ status: InvoiceStatus, count: Schema.Number })),
  receivedByDay: Schema.Array(Schema.Struct({ day: Schema.String, amountUsd: Schema.Number })).annotate({
    description: "USD of the payments observed each UTC day of the last 30 (today last), payments removed by a reorganisation left out"
  }),
  openExceptions: Schema.Number,
  waitingRefunds: Schema.Number.annotate({
    description: "Payment options with a refund payers asked for that the merchant has not paid yet (requested); requests side by side count once"
  })
})

export const DashboardInvoicesGroup = HttpApiGroup.make("dashboardInvoices")
  .add(
    HttpApiEndpoint.get("list", "/api/dashboard/invoices", {
      query: {
        ...InvoiceFilterQuery,
        cursor: Schema.optionalKey(Schema.String),
        limit: Schema.optionalKey(Schema.String.check(Schema.isPattern(/^(?:[1-9]\d?|1\d\d|200)$/, { message: "must be a number from 1 to 200" })))
      },
      success: Schema.Struct({ invoices: Schema.Array(DashboardInvoiceSummary), nextCursor: Schema.NullOr(Schema.String) }),
      error: BadRequest
    }).annotate(OpenApi.Summary, "List invoices").annotate(OpenApi.Description,
      "The calling account's live invoices (test ones with livemode=false), newest first, filtered; q is an invoice id (whole, or its start of 8 hex digits or more) or a part of the merchant reference or customer email."),
    HttpApiEndpoint.get("detail", "/api/dashboard/invoices/:id", {
      params: InvoiceIdParams,
      success: Schema.Struct({
        invoice: InvoiceView,
        closeActions: CloseActions,
        timeline: Schema.Array(Schema.Struct({ event: Schema.String, at: Schema.String })),
        deliveries: Schema.Array(Delivery),
        /** What each asset's rate rested on: the price sources used and left out, and their spread. */
        quotes: Schema.Array(QuoteView)
      }),
      error: NotFound
    }).annotate(OpenApi.Summary, "Invoice detail (dashboard)").annotate(OpenApi.Description,
      "One invoice with its payments, its event timeline (from the outbox), its webhook deliveries and its quotes (the price sources each rate rests on and their spread)."),
    HttpApiEndpoint.get("exportCsv", "/api/dashboard/exports/invoices.csv", {
      query: InvoiceFilterQuery,
      success: Schema.String.pipe(HttpApiSchema.asText({ contentType: "text/csv" })),
      error: BadRequest
    }).annotate(OpenApi.Summary, "Export invoices as CSV").annotate(OpenApi.Description,
      "Every matching invoice (live, or test with livemode=false) as RFC 4180 CSV (streamed), one row per invoice; cells that a spreadsheet would evaluate as formulas are prefixed with a single quote."),
    HttpApiEndpoint.get("overview", "/api/dashboard/overview", { query: LivemodeQuery, success: OverviewView, error: BadRequest })
      .annotate(OpenApi.Summary, "Dashboard overview").annotate(OpenApi.Description,
        "The dashboard's landing view: the account's invoices by status, USD received per day over the last 30 days, open exceptions and refunds waiting to be paid; of its live invoices, or of its test ones with livemode=false."),
    HttpApiEndpoint.post("closeException", "/api/dashboard/invoices/:id/exception/close", {
      params: InvoiceIdParams,
      payload: CloseExceptionBody,
      success: InvoiceView,
      error: [NotFound, Conflict]
    }).annotate(OpenApi.Summary, "Close an invoice's exception")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(OpenApi.Description, "Merchant review of invoice exceptions (dashboard session or bearer JWT).")
