import { Effect, Layer, Redacted } from "effect"
import { HttpRouter, HttpServerRequest, HttpServerResponse } from "effect/http"
import { timingSafeEqual } from "node:crypto"
import { PrometheusMetrics } from "effect/observability"
import { AppConfig } from "../config/AppConfig.ts"
import { TransportAnswers, transportResponse } from "../http/ApiErrors.ts"
import { configuredNetworks, type ChainCursorState, endpointsOf, lagSeconds } from "./ChainWatcherStatus.ts"
import { exitWithin } from "./Deadline.ts"
import { Monitoring } from "./Monitoring.ts"
import { type ChainGaugeValues, publishDatabaseGauges } from "../observability/Metrics.ts"

/** How long a scrape waits for its database reads before answering without them. */
const SCRAPE_DATABASE_DEADLINE = "2 seconds"

const gaugeValues = (state: ChainCursorState): ChainGaugeValues => {
  const report = endpointsOf(state)
  return {
    headHeight: state.headHeight === null ? undefined : Number(state.headHeight),
    processedHeight: state.processedHeight === null ? undefined : Number(state.processedHeight),
    lagSeconds: lagSeconds(state) ?? undefined,
    lastError: state.lastError === null ? 0 : 1,
    endpoints: report.endpoints.map((endpoint) => ({ endpoint: endpoint.endpoint, up: endpoint.state === "healthy", refusedTransfers: endpoint.refusedTransfers ?? 0 })),
    disagreement: report.disagreementHeight === null ? 0 : 1,
    corroboration: report.awaitingCorroboration === undefined ? undefined : {
      waiting: report.awaitingCorroboration.payments,
      disputed: report.awaitingCorroboration.disputed,
      waitedSeconds: report.awaitingCorroboration.since === null ? 0 : Math.max(0, Math.round((Date.now() - Date.parse(report.awaitingCorroboration.since)) / 1000))
    }
  }
}

/**
 * Who may read `/metrics`: with CHECKOUT_METRICS_TOKEN set, only `Authorization: Bearer <token>`
 * (compared in constant time); without it, anyone outside production and no one in production,
 * where the API port faces the public.
 */
export const metricsAccess = (token: Redacted.Redacted<string> | undefined, production: boolean) => (authorization: string | undefined): "allowed" | "unauthorized" | "hidden" => {
  if (token === undefined) return production ? "hidden" : "allowed"
  const expected = new TextEncoder().encode(`Bearer ${Redacted.value(token)}`)
  const given = new TextEncoder().encode(authorization ?? "")
  return given.length === expected.length && timingSafeEqual(given, expected) ? "allowed" : "unauthorized"
}

/**
 * `GET /metrics`: Prometheus text format (0.0.4) of every Effect metric, after the gauges read
 * from the database (webhook backlog, the watched networks' chain state) are refreshed.
 */
export const MetricsRouteLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const monitoring = yield* Monitoring
    const { chains, metricsToken, env } = yield* AppConfig
    const networks = configuredNetworks(chains)
    const access = metricsAccess(metricsToken, env === "production")

    const scrape = Effect.gen(function*() {
      const read = yield* exitWithin(monitoring.gauges, SCRAPE_DATABASE_DEADLINE)
      if (read === undefined || read._tag === "Failure") {
        yield* Effect.logWarning("Metrics scrape without database gauges: the database failed or did not answer in time", read?._tag === "Failure" ? read.cause : "")
        yield* publishDatabaseGauges(networks, undefined)
      } else {
        const { cursors, webhookBacklog } = read.value
        const watched = cursors.filter((state) => networks.includes(state.network))
        yield* publishDatabaseGauges(networks, { webhookBacklog, chains: new Map(watched.map((state) => [state.network, gaugeValues(state)])) })
      }
      const body = yield* PrometheusMetrics.format()
      return HttpServerResponse.text(body, { contentType: "text/plain; version=0.0.4; charset=utf-8" })
    })

    yield* router.add("GET", "/metrics", Effect.flatMap(HttpServerRequest.HttpServerRequest, (request) => {
      switch (access(request.headers.authorization)) {
        case "allowed":
          return scrape
        case "unauthorized":
          return Effect.succeed(HttpServerResponse.setHeader(transportResponse(TransportAnswers.metricsTokenInvalid), "www-authenticate", "Bearer"))
        case "hidden":
          return Effect.succeed(transportResponse(TransportAnswers.notFound))
      }
    }))
  })
).pipe(Layer.provide(Monitoring.layer))
