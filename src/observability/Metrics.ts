import { type Context, Effect, Metric } from "effect"

/**
 * The service's Prometheus metrics, as Effect `Metric`s in the default registry (what
 * `PrometheusMetrics.format` renders at `GET /metrics`).
 *
 * Each labelled series is its own metric object, made once per label set and kept: updating it
 * is a map lookup, where `Metric.withAttributes` on every update would copy the fiber's context.
 * Label values come from small closed sets (methods, route templates, statuses, networks,
 * outcomes), never from request data.
 */
const seriesOf = <M>(make: (attributes: Readonly<Record<string, string>>) => M) => {
  const made = new Map<string, M>()
  return (attributes: Readonly<Record<string, string>>): M => {
    const key = Object.values(attributes).join("\u0000")
    let metric = made.get(key)
    if (metric === undefined) {
      metric = make(attributes)
      made.set(key, metric)
    }
    return metric
  }
}

/** What a chain watcher did with one observation (the outcomes of `ChainWatcherOptions.onApplied`). */
export type EvidenceOutcome = "evidence" | "unmatched" | "invalidated" | "rejected"

const EVIDENCE_APPLIED = "checkout_evidence_applied_total"
const EVIDENCE_APPLIED_HELP = "Chain observations handled by the watchers, by network and outcome"

const evidenceApplied = seriesOf((attributes) => Metric.counter(EVIDENCE_APPLIED, { description: EVIDENCE_APPLIED_HELP, incremental: true, attributes }))

/**
 * Counts chain observations in `checkout_evidence_applied_total{network,outcome}`: evidence fed to
 * `PaymentEvidence`, an unmatched deposit recorded, evidence invalidated, or evidence refused.
 * Never fails; cheap enough to call once per observation.
 *
 * @example
 * makeChainWatcher({ ..., onApplied: (outcome) => recordEvidenceApplied(network, outcome) })
 */
export const recordEvidenceApplied = (network: string, outcome: EvidenceOutcome, count = 1): Effect.Effect<void> => Metric.update(evidenceApplied({ network, outcome }), count)

const REQUESTS = "http_requests_total"
const REQUESTS_HELP = "HTTP requests by method, route template and status"
const DURATION = "http_request_duration_seconds"
const DURATION_HELP = "HTTP request duration in seconds, until the response is ready to send, by method and route template"
const DURATION_BOUNDARIES = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

const requests = seriesOf((attributes) => Metric.counter(REQUESTS, { description: REQUESTS_HELP, incremental: true, attributes }))
const durations = seriesOf((attributes) => Metric.histogram(DURATION, { description: DURATION_HELP, boundaries: DURATION_BOUNDARIES, attributes }))

interface HttpSeries {
  readonly requests: Metric.Counter<number>
  readonly duration: Metric.Histogram<number>
}

// On every request: one lookup by a key built without allocating label objects.
const httpSeries = new Map<string, HttpSeries>()

/** One finished HTTP request; `route` is the matched route template or `"unmatched"`. */
export const recordHttpRequest = (method: string, route: string, status: number, seconds: number): Effect.Effect<void> =>
  Effect.contextWith((context: Context.Context<never>) => {
    const key = `${method} ${status} ${route}`
    let series = httpSeries.get(key)
    if (series === undefined) {
      series = { requests: requests({ method, route, status: String(status) }), duration: durations({ method, route }) }
      httpSeries.set(key, series)
    }
    series.requests.updateUnsafe(1, context)
    series.duration.updateUnsafe(seconds, context)
    return Effect.void
  })

const webhookBacklog = Metric.gauge("checkout_webhook_backlog", {
  description: "Webhook events not yet handed to delivery (outbox) plus deliveries still pending"
})

const databaseUp = Metric.gauge("checkout_database_up", {
  description: "1 when the database answered the scrape's queries in time, else 0 (the database gauges are then left out)"
})

const chainGauge = (name: string, description: string) => seriesOf((attributes) => Metric.gauge(name, { description, attributes }))

const chainGauges = {
  headHeight: chainGauge("checkout_chain_head_height", "Latest block height the network's watcher saw"),
  processedHeight: chainGauge("checkout_chain_processed_height", "Block height the network's watcher has processed up to"),
  lagSeconds: chainGauge("checkout_chain_lag_seconds", "Block time of the head minus block time of the processed height, in seconds"),
  lastError: chainGauge("checkout_chain_last_error", "1 when the network's watcher's last poll failed, else 0")
} as const

const endpointUp = chainGauge("checkout_chain_endpoint_up",
  "1 when the endpoint (its origin only) is healthy and fit to read the chain from, 0 when lagging, rate-limited, failing or in a minority")
const refusedTransfers = seriesOf((attributes) =>
  Metric.counter("checkout_chain_endpoint_refused_transfers_total", {
    description: "Transfers the endpoint reported that the network's other endpoints denied (not credited), as the watcher counts them since it started",
    attributes
  })
)
// The refused counts set at the previous scrape: the counter moves by the difference (down when the watcher restarted).
const refusedCounts = new Map<string, number>()

const publishRefused = (network: string, endpoint: string, count: number) =>
  Effect.suspend(() => {
    const key = `${network} ${endpoint}`
    const previous = refusedCounts.get(key)
    refusedCounts.set(key, count)
    // The first scrape writes the series even at 0; later ones only a change.
    return previous === count ? Effect.void : Metric.update(refusedTransfers({ network, endpoint }), count - (previous ?? 0))
  })

const disagreement = chainGauge("checkout_chain_disagreement",
  "1 when the network's endpoints dispute a block hash with no majority (the watcher does not advance past it), else 0")

const awaitingCorroboration = chainGauge("checkout_chain_awaiting_corroboration",
  "Payments detected on one endpoint's word that no other endpoint corroborated yet (at 0 confirmations until then)")
const disputedTransfers = chainGauge("checkout_chain_disputed_transfers",
  "Payments one endpoint shows and another denies with no majority either way (the watcher does not pass them; add an endpoint to settle)")
const awaitingSince = chainGauge("checkout_chain_awaiting_corroboration_seconds",
  "How long the oldest payment waiting for corroboration has waited, in seconds (0 when none waits)")

/** What `GET /metrics` reports of one watched network; `undefined` leaves that gauge out. */
export interface ChainGaugeValues {
  readonly headHeight: number | undefined
  readonly processedHeight: number | undefined
  readonly lagSeconds: number | undefined
  readonly lastError: number
  /** Each endpoint's origin and whether it is up; empty before the watcher published any. */
  readonly endpoints: ReadonlyArray<{ readonly endpoint: string; readonly up: boolean; readonly refusedTransfers: number }>
  readonly disagreement: number
  /** Payments waiting for corroboration, disputed ones among them, and the oldest's wait in seconds (with several endpoints). */
  readonly corroboration?: { readonly waiting: number; readonly disputed: number; readonly waitedSeconds: number } | undefined
}

// The endpoint series set at the previous scrape, to remove those no longer published.
const publishedEndpoints = new Map<string, ReadonlySet<string>>()

/** The gauges read from the database at scrape time. */
export interface DatabaseGauges {
  readonly webhookBacklog: number
  /** Every network: a network absent from the map (not watched, or no state yet) is left out of the output. */
  readonly chains: ReadonlyMap<string, ChainGaugeValues>
}

const setOrRemove = (gauge: Metric.Gauge<number>, value: number | undefined) => value === undefined ? Metric.remove(gauge) : Metric.update(gauge, value)

/**
 * Sets the scrape-time gauges, or, with `undefined` (the database did not answer), sets
 * `checkout_database_up` to 0 and removes them, so that a scrape never shows stale values as current.
 */
export const publishDatabaseGauges = (networks: ReadonlyArray<string>, gauges: DatabaseGauges | undefined): Effect.Effect<void> =>
  Effect.gen(function*() {
    yield* Metric.update(databaseUp, gauges === undefined ? 0 : 1)
    yield* setOrRemove(webhookBacklog, gauges?.webhookBacklog)
    for (const network of networks) {
      const values = gauges?.chains.get(network)
      for (const name of ["headHeight", "processedHeight", "lagSeconds"] as const) {
        yield* setOrRemove(chainGauges[name]({ network }), values?.[name])
      }
      yield* setOrRemove(chainGauges.lastError({ network }), values?.lastError)
      yield* setOrRemove(disagreement({ network }), values?.disagreement)
      yield* setOrRemove(awaitingCorroboration({ network }), values?.corroboration?.waiting)
      yield* setOrRemove(disputedTransfers({ network }), values?.corroboration?.disputed)
      yield* setOrRemove(awaitingSince({ network }), values?.corroboration?.waitedSeconds)
      const current = new Set(values?.endpoints.map((endpoint) => endpoint.endpoint) ?? [])
      for (const endpoint of publishedEndpoints.get(network) ?? []) {
        if (current.has(endpoint)) continue
        yield* Metric.remove(endpointUp({ network, endpoint }))
        yield* Metric.remove(refusedTransfers({ network, endpoint }))
        refusedCounts.delete(`${network} ${endpoint}`)
      }
      for (const endpoint of values?.endpoints ?? []) {
        yield* Metric.update(endpointUp({ network, endpoint: endpoint.endpoint }), endpoint.up ? 1 : 0)
        yield* publishRefused(network, endpoint.endpoint, endpoint.refusedTransfers)
      }
      publishedEndpoints.set(network, current)
    }
  })
