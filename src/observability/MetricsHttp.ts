import { Effect, Layer } from "effect"
import { HttpRouter, HttpServerResponse } from "effect/http"
import { PrometheusMetrics } from "effect/observability"
import { AppConfig } from "../config/AppConfig.ts"
import { configuredNetworks, type ChainCursorState, lagSeconds } from "../monitoring/ChainWatcherStatus.ts"
import { exitWithin } from "../monitoring/Deadline.ts"
import { MonitoringRepo } from "../monitoring/MonitoringRepo.ts"
import { type ChainGaugeValues, publishDatabaseGauges } from "./Metrics.ts"

/** How long a scrape waits for its database reads before answering without them. */
const SCRAPE_DATABASE_DEADLINE = "2 seconds"

const gaugeValues = (state: ChainCursorState): ChainGaugeValues => ({
  headHeight: state.headHeight === null ? undefined : Number(state.headHeight),
  processedHeight: state.processedHeight === null ? undefined : Number(state.processedHeight),
  lagSeconds: lagSeconds(state) ?? undefined,
  lastError: state.lastError === null ? 0 : 1
})

/**
 * `GET /metrics`: Prometheus text format (0.0.4) of every Effect metric, after the gauges read
 * from the database (webhook backlog, the watched networks' chain state) are refreshed. No
 * authentication: keep it behind the network edge.
 */
export const MetricsRouteLive = HttpRouter.use((router) =>
  Effect.gen(function*() {
    const monitoring = yield* MonitoringRepo
    const { chains } = yield* AppConfig
    const networks = configuredNetworks(chains)
    const readGauges = Effect.all({ cursors: monitoring.chainCursors, webhookBacklog: monitoring.webhookBacklog }, { concurrency: "unbounded" })

    const scrape = Effect.gen(function*() {
      const read = yield* exitWithin(readGauges, SCRAPE_DATABASE_DEADLINE)
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

    yield* router.add("GET", "/metrics", scrape)
  })
).pipe(Layer.provide(MonitoringRepo.layer))
