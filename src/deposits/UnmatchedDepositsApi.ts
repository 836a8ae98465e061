import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest, NotFound } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { LivemodeQuery } from "../http/LivemodeQuery.ts"
import { InvoiceIdParams } from "../http/RequestSchemas.ts"
import { UnmatchedDeposit } from "./UnmatchedDeposit.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

export const UnmatchedDepositsGroup = HttpApiGroup.make("unmatchedDeposits")
  .add(
    HttpApiEndpoint.get("list", "/api/dashboard/unmatched-deposits", {
      query: {
        cursor: Schema.optionalKey(Schema.String).annotate({ description: "nextCursor of the previous page" }),
        limit: Schema.optionalKey(
          Schema.String.check(Schema.isPattern(/^(?:[1-9]\d?|100)$/, { message: "must be a number from 1 to 100" }))
        ).annotate({ description: "Page size, 1 to 100 (default 50)" }),
        ...LivemodeQuery
      },
      success: Schema.Struct({ data: Schema.Array(UnmatchedDeposit), nextCursor: Schema.NullOr(Schema.String) }),
      error: BadRequest
    }).annotate(OpenApi.Summary, "List unmatched deposits").annotate(OpenApi.Description,
      "The calling account's unmatched deposits to its live invoices (to its test invoices with livemode=false), newest first."),
    HttpApiEndpoint.get("forInvoice", "/api/dashboard/invoices/:id/unmatched-deposits", {
      params: InvoiceIdParams,
      success: Schema.Struct({ data: Schema.Array(UnmatchedDeposit) }),
      error: NotFound
    }).annotate(OpenApi.Summary, "List an invoice's unmatched deposits").annotate(OpenApi.Description, "Unmatched deposits to one of the calling account's invoices, newest first.")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(
    OpenApi.Description,
    "Deposits to an invoice's address that match none of its payment options (wrong token or network): never counted, shown so that they are not lost."
  )
