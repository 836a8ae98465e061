import { Option, Schema } from "effect"
import { AwaitingCorroboration, cutUrls, EndpointReport, EndpointsReport } from "../chains/source/EndpointSelection.ts"
import type { ChainWatchSettings } from "../config/AppConfig.ts"
import { NETWORKS } from "../payments/Networks.ts"
import { stateKey } from "../chains/watcher/WatchScope.ts"
import { NullableDate } from "../domain/Timestamps.ts"

/** A network's row of `chain_cursors`: the progress and errors its watcher publishes. */
export const ChainCursorState = Schema.Struct({
  network: Schema.String,
  processedHeight: Schema.NullOr(Schema.BigIntFromString),
  /** Block time of the processed height. */
  chainTime: NullableDate,
  headHeight: Schema.NullOr(Schema.BigIntFromString),
  headTime: NullableDate,
  lastError: Schema.NullOr(Schema.String),
  lastErrorAt: NullableDate,
  updatedAt: Schema.Date,
  /** EndpointsReport as JSON, as the watcher last published it. */
  endpoints: Schema.NullOr(Schema.String)
})
export type ChainCursorState = typeof ChainCursorState.Type

/** How far the processed block's time is behind the head's, in seconds; null until both are known. */
export const lagSeconds = (state: Pick<ChainCursorState, "chainTime" | "headTime">): number | null =>
  state.chainTime === null || state.headTime === null ? null : Math.max(0, (state.headTime.getTime() - state.chainTime.getTime()) / 1000)

/**
 * A watcher's error text as the dashboard shows it: every URL cut to its origin, since RPC
 * providers put API keys in paths and query strings, and errors may quote the endpoint.
 */
export const redactError = (message: string): string => cutUrls(message)

const iso = (date: Date | null) => (date === null ? null : date.toISOString())

const decodeEndpoints = Schema.decodeUnknownOption(Schema.fromJsonString(EndpointsReport))

/** The endpoints a watcher published (errors redacted); none before its first poll. */
export const endpointsOf = (state: Pick<ChainCursorState, "endpoints"> | undefined): EndpointsReport => {
  const report = state?.endpoints == null ? Option.none() : decodeEndpoints(state.endpoints)
  if (Option.isNone(report)) return { endpoints: [], disagreementHeight: null }
  return {
    ...report.value,
    endpoints: report.value.endpoints.map((endpoint) => ({ ...endpoint, lastError: endpoint.lastError === null ? null : redactError(endpoint.lastError) }))
  }
}

/** The dashboard's view of one network's watcher. */
export const ChainWatcherStatus = Schema.Struct({
  network: Schema.Literals(NETWORKS),
  livemode: Schema.optionalKey(Schema.Literal(false)).annotate({
    description:
      "false: the network's testnet watcher (test invoices only, CHECKOUT_TEST_RPC_URL_<NETWORK>, CHECKOUT_TEST_ESPLORA_URL), listed after every live one; absent on the live watchers"
  }),
  configured: Schema.Boolean.annotate({ description: "Whether this deployment has an endpoint (a watcher) for the network" }),
  headHeight: Schema.NullOr(Schema.String).annotate({ description: "Latest block height seen (decimal string)" }),
  processedHeight: Schema.NullOr(Schema.String).annotate({ description: "Block height processed up to (decimal string)" }),
  chainTime: Schema.NullOr(Schema.String).annotate({ description: "Block time of the processed height" }),
  lagSeconds: Schema.NullOr(Schema.Number).annotate({ description: "Head block time minus processed block time, in seconds" }),
  lastError: Schema.NullOr(Schema.String).annotate({ description: "The last poll's error, cleared by the next successful poll (URLs cut to their origin)" }),
  lastErrorAt: Schema.NullOr(Schema.String),
  updatedAt: Schema.NullOr(Schema.String),
  endpoints: Schema.Array(EndpointReport).annotate({
    description: "Each configured endpoint, preferred first: healthy, lagging, rate_limited (until retryAt), failing or disagreeing, and which one is in use"
  }),
  disagreementHeight: Schema.NullOr(Schema.String).annotate({
    description: "Height whose block hash the endpoints dispute with no majority: the watcher does not advance past it until a majority agrees"
  }),
  awaitingCorroboration: Schema.optionalKey(AwaitingCorroboration.annotate({
    description: "With several endpoints: payments detected on one endpoint's word, at 0 confirmations until another corroborates them"
  }))
}).annotate({ identifier: "ChainWatcherStatus" })
export type ChainWatcherStatus = typeof ChainWatcherStatus.Type

/** The networks with a testnet watcher (test invoices only). */
const testnetsOf = (settings: ChainWatchSettings) => NETWORKS.filter((network) => settings.testEndpointLists?.[network] !== undefined)

/** Every network, configured or not, with whatever its watcher last published; then each configured testnet watcher. */
export const chainWatcherStatuses = (
  settings: ChainWatchSettings,
  states: ReadonlyArray<ChainCursorState>
): ReadonlyArray<ChainWatcherStatus> => [
  ...NETWORKS.map((network) => statusOf(network, settings.endpoints[network] !== undefined, states.find((candidate) => candidate.network === network))),
  ...testnetsOf(settings).map((network) => ({
    ...statusOf(network, true, states.find((candidate) => candidate.network === stateKey({ network, livemode: false }))),
    livemode: false as const
  }))
]

const statusOf = (network: ChainWatcherStatus["network"], configured: boolean, state: ChainCursorState | undefined): ChainWatcherStatus => {
  return {
    network,
    configured,
    headHeight: state?.headHeight?.toString() ?? null,
    processedHeight: state?.processedHeight?.toString() ?? null,
    chainTime: iso(state?.chainTime ?? null),
    lagSeconds: state === undefined ? null : lagSeconds(state),
    lastError: state?.lastError == null ? null : redactError(state.lastError),
    lastErrorAt: iso(state?.lastErrorAt ?? null),
    updatedAt: iso(state?.updatedAt ?? null),
    ...endpointsOf(state)
  }
}

/**
 * The watchers `GET /metrics` reports, by their `network` label: the networks with an endpoint,
 * then the testnet watchers as `<network>:test` (their state key: never a live label).
 */
export const configuredNetworks = (settings: ChainWatchSettings): ReadonlyArray<string> => [
  ...NETWORKS.filter((network) => settings.endpoints[network] !== undefined),
  ...testnetsOf(settings).map((network) => stateKey({ network, livemode: false }))
]
