import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { BadRequest } from "../http/ApiErrors.ts"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { LivemodeQuery } from "../http/LivemodeQuery.ts"
import { ForwarderSweep, SweepStatus } from "./ForwarderSweep.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

export const SweepsGroup = HttpApiGroup.make("sweeps")
  .add(
    HttpApiEndpoint.get("list", "/api/dashboard/forwarder-sweeps", {
      query: { status: Schema.optionalKey(SweepStatus).annotate({ description: "Only sweeps in this state" }), ...LivemodeQuery },
      success: Schema.Struct({ data: Schema.Array(ForwarderSweep) }),
      error: BadRequest
    }).annotate(OpenApi.Summary, "List forwarder sweeps").annotate(OpenApi.Description,
      "The calling account's newest 100 forwarder sweeps (wallet-contract payments of its live invoices; of its test invoices with livemode=false), newest first.")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(OpenApi.Description, "Wallet-contract payments on their way from their forwarder to the merchant's recipient.")
