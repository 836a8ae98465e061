import { ServiceUnavailable } from "../http/ApiErrors.ts"

/** Readiness's HTTP error, declared once with its status and message (HealthApi.ts lists it). */
export const HealthErrors = {
  databaseUnavailable: () => new ServiceUnavailable({ error: "Database unavailable" })
} as const
