import { Schema } from "effect"
import { HttpApiEndpoint, HttpApiGroup, OpenApi } from "effect/http-api"
import { ServiceUnavailable } from "../http/ApiErrors.ts"
import { DatabaseGate } from "../http/DatabaseGate.ts"

export const HealthGroup = HttpApiGroup.make("health")
  .add(
    HttpApiEndpoint.get("live", "/api/health", {
      success: Schema.Struct({ status: Schema.Literal("ok") }).annotate({ identifier: "Liveness" })
    }).annotate(OpenApi.Summary, "Liveness").annotate(OpenApi.Description, "Liveness: the process serves HTTP. Never touches the database."),
    HttpApiEndpoint.get("ready", "/api/health/ready", {
      success: Schema.Struct({ status: Schema.Literal("ready") }).annotate({ identifier: "Readiness" }),
      error: ServiceUnavailable
    }).annotate(OpenApi.Summary, "Readiness").annotate(
      OpenApi.Description,
      "Readiness: the database answered within 2 seconds. Otherwise 503 `{\"error\":\"Database unavailable\"}` with a Retry-After header."
    ).middleware(DatabaseGate)
  )
  .annotate(OpenApi.Description, "Health checks for load balancers and orchestrators: no authentication.")

/** Readiness's HTTP error, declared once with its status and message (the endpoint above lists it). */
export const HealthErrors = {
  databaseUnavailable: () => new ServiceUnavailable({ error: "Database unavailable" })
} as const
