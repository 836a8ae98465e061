import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { DashboardAuthentication } from "../http/Authentication.ts"
import { ChainWatcherStatus } from "./ChainWatcherStatus.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

export const ChainWatchersGroup = HttpApiGroup.make("chainWatchers")
  .add(
    HttpApiEndpoint.get("list", "/api/dashboard/chain-watchers", {
      success: Schema.Struct({ watchers: Schema.Array(ChainWatcherStatus) })
    }).annotate(OpenApi.Summary, "List chain watchers")
  )
  .middleware(DashboardAuthentication)
  .middleware(DatabaseGate)
  .annotate(
    OpenApi.Description,
    "State of the chain watchers of this deployment, one entry per network (dashboard session or bearer JWT)."
  )
