/** Each network's chain watcher and its endpoints. */

import { endpointVariable } from "../../config/EndpointVariables.ts"
import type { ChainEndpoint, ChainWatcher, ChainWatcherList } from "./Api.ts"
import { api, cardTable, h, notice, show, when } from "./Ui.ts"

/** An endpoint's state in words, in its colour: "Rate-limited until 12:00:05". */
const endpointBadge = (endpoint: ChainEndpoint) => {
  const words = {
    healthy: "Healthy",
    lagging: "Lagging",
    rate_limited: `Rate-limited until ${when(endpoint.retryAt)}`,
    failing: endpoint.retryAt === null ? "Failing" : `Failing, retried after ${when(endpoint.retryAt)}`,
    disagreeing: endpoint.disagreesAt !== null
      ? `Disagreeing at height ${endpoint.disagreesAt}`
      : (endpoint.refusedTransfers ?? 0) > 0
      ? `Disagreeing: ${endpoint.refusedTransfers} transfer(s) the others deny`
      : "Disagreeing"
  } satisfies Record<ChainEndpoint["state"], string>
  return h("span", { class: `status endpoint-${endpoint.state}`, "data-state": endpoint.state }, words[endpoint.state])
}

const networkName = (network: string) => network.charAt(0).toUpperCase() + network.slice(1)

const watcherFacts = (watcher: ChainWatcher) => {
  const lag = watcher.lagSeconds === null ? "—" : `${Math.round(watcher.lagSeconds)} s`
  const error = watcher.lastError === null ? "None" : `${watcher.lastError} (${when(watcher.lastErrorAt)})`
  return h("dl", { class: "facts" }, h("dt", {}, "Processed up to"), h("dd", {}, watcher.processedHeight ?? "—"), h("dt", {}, "Head"), h("dd", {}, watcher.headHeight ?? "—"),
    h("dt", {}, "Behind the head"), h("dd", {}, lag), h("dt", {}, "Last error"), h("dd", {}, error))
}

const endpointRow = (endpoint: ChainEndpoint) =>
  h("tr", { "data-endpoint": endpoint.endpoint }, h("td", { class: "title mono" }, endpoint.endpoint), h("td", { class: "badge" }, endpointBadge(endpoint)),
    h("td", {}, endpoint.inUse ? "In use" : "—"), h("td", { class: "number" }, endpoint.headHeight ?? "—"), h("td", { class: "mono" }, endpoint.lastError ?? "—"))

/** A network without a watcher, and the variable that gives it one (the configuration's own rule). */
const notWatched = (network: string) => {
  const kind = network === "bitcoin" ? "an Esplora API's URL" : "JSON-RPC endpoint URLs"
  return h("p", { class: "not-watched" }, "Not watched: no endpoint is configured. To watch it, set ", h("code", { class: "variable" }, endpointVariable(network)),
    ` to ${kind} (a comma-separated list, preferred first) and restart the service.`)
}

const watcherCard = (watcher: ChainWatcher) => {
  // A testnet watcher (test invoices only) beside the live one of its network.
  const test = watcher.livemode === false
  const heading = h("h2", {}, test ? `${networkName(watcher.network)} (test)` : networkName(watcher.network))
  if (!watcher.configured) return h("section", { class: "card", "data-network": watcher.network }, heading, notWatched(watcher.network))
  const disagreement = watcher.disagreementHeight === null
    ? null
    : notice(`The endpoints disagree about the block at height ${watcher.disagreementHeight} with no majority: the watcher waits below it.`)
  const waiting = watcher.awaitingCorroboration
  const corroboration = waiting === undefined || waiting.payments === 0 ? null : notice(
    `${waiting.payments} transfer(s) wait for another endpoint to corroborate them (${waiting.disputed} disputed) since ${waiting.since ?? "now"}: ` +
      "detected at 0 confirmations (a refund: sent, not completed), never confirmed until a majority of the endpoints shows them. Add an endpoint to settle a dispute."
  )
  const endpoints = watcher.endpoints.length === 0
    ? h("p", {}, "No endpoint state yet: the watcher publishes it after its first poll.")
    : cardTable(["Endpoint", "State", "In use", "Head", "Last error"], watcher.endpoints.map(endpointRow))
  return h("section", { class: "card", "data-network": test ? `${watcher.network}:test` : watcher.network }, heading, watcherFacts(watcher), disagreement, corroboration, endpoints)
}

export const chainWatchersView = async () => {
  const { watchers } = await api<ChainWatcherList>("GET", "/api/dashboard/chain-watchers")
  show(h("h1", {}, "Chain watchers"),
    h("p", {}, "Each network's watcher and its endpoints, preferred first: the one in use is the first that answers, is not backing off and is not lagging."),
    ...[...watchers].sort((a, b) => Number(b.configured) - Number(a.configured)).map(watcherCard))
}
