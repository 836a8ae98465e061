import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { Conflict, NotFound } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { InvoiceIdParams, text } from "../http/RequestSchemas.ts"
import { Invoice } from "../http/ResponseSchemas.ts"

export const CloseExceptionBody = Schema.Struct({
  action: Schema.Literals(["accept_late_payment", "mark_paid_out_of_band", "close_unpaid"]).annotate({
    message: "must be one of accept_late_payment, mark_paid_out_of_band, close_unpaid"
  }).annotateKey({ messageMissingKey: "is required" }),
  note: text(2000).check(Schema.isMinLength(1, { message: "must not be empty" })).annotateKey({ messageMissingKey: "is required" })
}).annotate({ message: "must be a JSON object" })

export const DashboardInvoicesGroup = HttpApiGroup.make("dashboardInvoices")
  .add(
    HttpApiEndpoint.post("closeException", "/api/dashboard/invoices/:id/exception/close", {
      params: InvoiceIdParams,
      payload: CloseExceptionBody,
      success: Invoice,
      error: [NotFound, Conflict]
    })
  )
  .middleware(DashboardAuthentication)
  .annotate(OpenApi.Description, "Merchant review of invoice exceptions (dashboard session or bearer JWT).")
