import { Schema } from "effect"

/**
 * Which of a network's endpoints the watcher reads from, as pure functions of plain values: the
 * first listed that is usable (answering, not backing off, not lagging, not in a minority about a
 * block hash), and, where several answer, the block hash a majority of them gives at a height.
 */

/** What the watcher knows of one endpoint. `url` is the configured one: never published as is. */
export interface EndpointState {
  readonly url: string
  /** Head height of the last successful head request; undefined after a failure. */
  readonly head: bigint | undefined
  /** Failed requests in a row. */
  readonly failures: number
  readonly lastError: string | undefined
  /** Not asked anything before this time (epoch ms): a back-off after failures, or the server's Retry-After. */
  readonly retryAt: number
  /** Whether the last failure was HTTP 429. */
  readonly rateLimited: boolean
  /** The height at which it gave a block hash no majority shared, until it agrees again. */
  readonly disagreesAt: bigint | undefined
  /** Transfers it reported that the other endpoints denied (see Corroboration.ts), since the process started. */
  readonly refusedTransfers: number
  /** Not read from before this time (epoch ms): it reported a transfer the others denied. */
  readonly refusedUntil: number
}

/** How a request to an endpoint failed, as far as choosing endpoints goes. */
export interface EndpointFailure {
  readonly message: string
  readonly rateLimited?: boolean | undefined
  /** The server's Retry-After, in ms. */
  readonly retryAfterMs?: number | undefined
}

const MAX_BACKOFF_MILLIS = 60_000

/** How long an endpoint that failed `failures` times in a row is left alone: 1 s, doubling, at most a minute. */
export const backoffMillis = (failures: number): number => Math.min(1_000 * 2 ** Math.max(0, failures - 1), MAX_BACKOFF_MILLIS)

export const initialStates = (urls: ReadonlyArray<string>): ReadonlyArray<EndpointState> =>
  urls.map((url) => ({ url, head: undefined, failures: 0, lastError: undefined, retryAt: 0, rateLimited: false, disagreesAt: undefined, refusedTransfers: 0, refusedUntil: 0 }))

const update = (states: ReadonlyArray<EndpointState>, index: number, change: (state: EndpointState) => EndpointState) =>
  states.map((state, at) => (at === index ? change(state) : state))

/** A successful head request: the endpoint answers again. */
export const withHead = (states: ReadonlyArray<EndpointState>, index: number, head: bigint): ReadonlyArray<EndpointState> =>
  update(states, index, (state) => ({ ...state, head, failures: 0, lastError: undefined, retryAt: 0, rateLimited: false }))

/** Any successful request: clears the failures (not the head, which only a head request sets). */
export const withSuccess = (states: ReadonlyArray<EndpointState>, index: number): ReadonlyArray<EndpointState> =>
  states[index].failures === 0 ? states : update(states, index, (state) => ({ ...state, failures: 0, lastError: undefined, retryAt: 0, rateLimited: false }))

/** A failed request: left alone for the server's Retry-After, else for a back-off that doubles. */
export const withFailure = (states: ReadonlyArray<EndpointState>, index: number, failure: EndpointFailure, now: number): ReadonlyArray<EndpointState> =>
  update(states, index, (state) => {
    const failures = state.failures + 1
    const wait = failure.retryAfterMs ?? backoffMillis(failures)
    return { ...state, head: undefined, failures, lastError: failure.message, retryAt: now + wait, rateLimited: failure.rateLimited === true }
  })

/** How long an endpoint that reported a transfer the others denied is not read from. */
export const REFUSAL_MILLIS = 10 * 60_000

/** A transfer it reported was denied by the other endpoints: counted, and not read from for a while. */
export const withRefusal = (states: ReadonlyArray<EndpointState>, index: number, now: number, quarantineMs = REFUSAL_MILLIS): ReadonlyArray<EndpointState> =>
  update(states, index, (state) => ({ ...state, refusedTransfers: state.refusedTransfers + 1, refusedUntil: now + quarantineMs }))

/** Within the time after a denied transfer. */
export const isRefused = (state: EndpointState, now: number): boolean => state.refusedUntil > now

/** The highest head among endpoints that answered their last head request. */
export const highestHead = (states: ReadonlyArray<EndpointState>): bigint | undefined =>
  states.reduce<bigint | undefined>((highest, state) => (state.head !== undefined && (highest === undefined || state.head > highest) ? state.head : highest), undefined)

/** More than `maxLag` blocks behind the highest head the others report. */
export const isLagging = (states: ReadonlyArray<EndpointState>, index: number, maxLag: bigint): boolean => {
  const head = states[index].head
  const highest = highestHead(states)
  return head !== undefined && highest !== undefined && head < highest - maxLag
}

/** May be asked now (no back-off or Retry-After pending). */
export const isAvailable = (state: EndpointState, now: number): boolean => state.retryAt <= now

/** Answering, not backing off, not lagging: fit to read the chain from, unless a majority contradicted it. */
const isAnswering = (states: ReadonlyArray<EndpointState>, index: number, now: number, maxLag: bigint): boolean =>
  isAvailable(states[index], now) && states[index].failures === 0 && !isLagging(states, index, maxLag)

/** Answering, not backing off, not lagging, not in a minority: fit to read the chain from. */
export const isUsable = (states: ReadonlyArray<EndpointState>, index: number, now: number, maxLag: bigint): boolean =>
  isAnswering(states, index, now, maxLag) && states[index].disagreesAt === undefined && !isRefused(states[index], now)

/**
 * The endpoints to read from, preferred (first listed) first. With a single endpoint, always that
 * one (as without failover). When every answering endpoint disagrees (a split with no majority),
 * those: the watcher reads, but does not advance past the disputed height (see MultiSource).
 */
export const readOrder = (states: ReadonlyArray<EndpointState>, now: number, maxLag: bigint): ReadonlyArray<number> => {
  if (states.length === 1) return [0]
  const usable = states.flatMap((_, index) => (isUsable(states, index, now, maxLag) ? [index] : []))
  return usable.length > 0 ? usable : states.flatMap((_, index) => (isAnswering(states, index, now, maxLag) ? [index] : []))
}

/** Endpoints that vote on a block hash at `height`: answering, not lagging, and with a head at or above it. */
export const voters = (states: ReadonlyArray<EndpointState>, height: bigint, now: number, maxLag: bigint): ReadonlyArray<number> =>
  states.flatMap((state, index) =>
    isAvailable(state, now) && state.failures === 0 && !isLagging(states, index, maxLag) && (state.head === undefined || state.head >= height) ? [index] : []
  )

/** The outcome of asking several endpoints for the block hash at one height. */
export interface Tally {
  /** The hash more than half of those that answered gave; undefined when none did. */
  readonly agreed: string | undefined
  /** Those that answered something else (all that answered, when there is no majority). */
  readonly dissenters: ReadonlyArray<number>
  /** Those that answered the agreed hash. */
  readonly agreeing: ReadonlyArray<number>
}

/** Majority of those that answered (an endpoint without the block does not vote). */
export const tally = (answers: ReadonlyArray<{ readonly index: number; readonly hash: string | undefined }>): Tally => {
  const counted = answers.filter((answer): answer is { index: number; hash: string } => answer.hash !== undefined)
  const counts = new Map<string, number>()
  for (const answer of counted) counts.set(answer.hash, (counts.get(answer.hash) ?? 0) + 1)
  let agreed: string | undefined
  for (const [hash, count] of counts) if (2 * count > counted.length) agreed = hash
  return {
    agreed,
    agreeing: counted.filter((answer) => answer.hash === agreed).map((answer) => answer.index),
    dissenters: counted.filter((answer) => answer.hash !== agreed).map((answer) => answer.index)
  }
}

/** Records a tally: dissenters disagree at `height`, those agreeing no longer do. */
export const withTally = (states: ReadonlyArray<EndpointState>, height: bigint, result: Tally): ReadonlyArray<EndpointState> =>
  states.map((state, index) =>
    result.dissenters.includes(index) ? { ...state, disagreesAt: height } : result.agreeing.includes(index) ? { ...state, disagreesAt: undefined } : state
  )

/** An endpoint's state as the dashboard and `/metrics` show it. */
export const EndpointHealth = Schema.Literals(["healthy", "lagging", "rate_limited", "failing", "disagreeing"])
export type EndpointHealth = typeof EndpointHealth.Type

export const healthOf = (states: ReadonlyArray<EndpointState>, index: number, maxLag: bigint, now = Date.now()): EndpointHealth => {
  const state = states[index]
  if (state.failures > 0) return state.rateLimited ? "rate_limited" : "failing"
  if (state.disagreesAt !== undefined || isRefused(state, now)) return "disagreeing"
  return isLagging(states, index, maxLag) ? "lagging" : "healthy"
}

/** An endpoint URL cut to its origin: providers put API keys in paths and query strings. */
export const originOf = (url: string): string => {
  try {
    const parsed = new URL(url)
    return `${parsed.protocol}//${parsed.host}`
  } catch {
    return "[url]"
  }
}

/** Every URL in a text cut to its origin (errors may quote the endpoint, key included). */
export const cutUrls = (message: string): string =>
  message.replace(/\b[a-z][a-z0-9+.-]*:\/\/[^\s"'<>]+/gi, (url) => {
    try {
      const parsed = new URL(url)
      return parsed.host === "" ? "[url]" : `${parsed.protocol}//${parsed.host}`
    } catch {
      return "[url]"
    }
  })

/** The endpoint's origin, numbered when another listed before it has the same one (keys in paths). */
export const labelOf = (states: ReadonlyArray<EndpointState>, index: number): string => {
  const origin = originOf(states[index].url)
  return states.slice(0, index).some((state) => originOf(state.url) === origin) ? `${origin} #${index + 1}` : origin
}

/** One endpoint as published (URL cut to its origin, errors left to the publisher to redact). */
export const EndpointReport = Schema.Struct({
  endpoint: Schema.String.annotate({ description: "The endpoint's origin (scheme, host and port; never its path or query)" }),
  state: EndpointHealth,
  inUse: Schema.Boolean.annotate({ description: "Whether the watcher read the chain from this endpoint last" }),
  headHeight: Schema.NullOr(Schema.String).annotate({ description: "Head height it reported last (decimal string)" }),
  retryAt: Schema.NullOr(Schema.String).annotate({ description: "Not asked again before this time (Retry-After or back-off)" }),
  disagreesAt: Schema.NullOr(Schema.String).annotate({ description: "Height at which its block hash had no majority (decimal string)" }),
  refusedTransfers: Schema.optionalKey(Schema.Number.annotate({
    description: "Transfers it reported that the other endpoints denied (not credited), since the watcher started"
  })),
  refusedUntil: Schema.optionalKey(Schema.NullOr(Schema.String).annotate({
    description: "Not read from before this time: it reported a transfer the other endpoints denied"
  })),
  lastError: Schema.NullOr(Schema.String)
}).annotate({ identifier: "ChainEndpoint" })
export type EndpointReport = typeof EndpointReport.Type

/** Payments one endpoint reported that no majority of the others corroborated yet: at 0 confirmations until then. */
export const AwaitingCorroboration = Schema.Struct({
  payments: Schema.Number.annotate({ description: "Valid payments waiting for another endpoint to corroborate them (0 confirmations until then)" }),
  disputed: Schema.Number.annotate({ description: "Those among them another endpoint denies, with no majority either way (add an endpoint to settle them)" }),
  since: Schema.NullOr(Schema.String).annotate({ description: "When the oldest of them started waiting" })
}).annotate({ identifier: "AwaitingCorroboration" })
export type AwaitingCorroboration = typeof AwaitingCorroboration.Type

/** What a network's watcher publishes about its endpoints. */
export const EndpointsReport = Schema.Struct({
  endpoints: Schema.Array(EndpointReport),
  /** The lowest height the endpoints disagree about with no majority: the watcher waits below it. */
  disagreementHeight: Schema.NullOr(Schema.String),
  awaitingCorroboration: Schema.optionalKey(AwaitingCorroboration)
})
export type EndpointsReport = typeof EndpointsReport.Type

export const reportOf = (
  states: ReadonlyArray<EndpointState>,
  inUse: number | undefined,
  disagreementHeight: bigint | undefined,
  maxLag: bigint,
  now = Date.now()
): EndpointsReport => ({
  endpoints: states.map((state, index) => ({
    endpoint: labelOf(states, index),
    state: healthOf(states, index, maxLag, now),
    inUse: index === inUse,
    headHeight: state.head?.toString() ?? null,
    retryAt: state.failures > 0 ? new Date(state.retryAt).toISOString() : null,
    disagreesAt: state.disagreesAt?.toString() ?? null,
    refusedTransfers: state.refusedTransfers,
    refusedUntil: isRefused(state, now) ? new Date(state.refusedUntil).toISOString() : null,
    lastError: state.lastError === undefined ? null : cutUrls(state.lastError)
  })),
  disagreementHeight: disagreementHeight?.toString() ?? null
})

/** An HTTP Retry-After value (seconds, or an HTTP date) in ms from `now`; undefined when absent or unreadable. */
export const retryAfterMillis = (value: string | null | undefined, now: number): number | undefined => {
  if (value === null || value === undefined || value.trim() === "") return undefined
  const text = value.trim()
  if (/^\d+$/.test(text)) return Math.min(Number(text) * 1000, 3_600_000)
  const at = Date.parse(text)
  return Number.isNaN(at) ? undefined : Math.min(Math.max(0, at - now), 3_600_000)
}

/**
 * The endpoints to try for a request in a process that may not poll heads (the API's Solana
 * preparation): the read order, then, in the order listed, those whose back-off has passed but
 * that no head request has cleared yet, so that a failed endpoint is tried again once its back-off
 * (or Retry-After) is over. Where heads are polled first, the same as `readOrder`.
 */
export const requestOrder = (states: ReadonlyArray<EndpointState>, now: number, maxLag: bigint): ReadonlyArray<number> => {
  const order = readOrder(states, now, maxLag)
  const retried = states.flatMap((state, index) => (state.failures > 0 && isAvailable(state, now) && !order.includes(index) ? [index] : []))
  return [...order, ...retried].sort((a, b) => a - b)
}
