import { Clock, Effect } from "effect"
import { ChainRpcError } from "./ChainSource.ts"
import { type Answer, decide, isSettled, type Verdict, type Vote } from "./Corroboration.ts"
import {
  type EndpointsReport,
  type EndpointState,
  healthOf,
  initialStates,
  isAvailable,
  isRefused,
  labelOf,
  originOf,
  readOrder,
  reportOf,
  requestOrder,
  withFailure,
  withHead,
  withRefusal,
  withSuccess
} from "./EndpointSelection.ts"

/** Several endpoints of one network behind one client of any kind (EndpointSelection has the rules). */
export interface EndpointPool<C> {
  /** `call` on the first usable endpoint, then on the next ones while it fails (an error, a time-out, HTTP 429). */
  readonly run: <A>(call: (client: C) => Effect.Effect<A, ChainRpcError>) => Effect.Effect<A, ChainRpcError>
  /** `run`, saying which endpoint answered (the reporter of what it read). */
  readonly runAt: <A>(call: (client: C) => Effect.Effect<A, ChainRpcError>) => Effect.Effect<{ readonly index: number; readonly value: A }, ChainRpcError>
  /**
   * What endpoint `reporter` reported, asked of the others one after the other (the usable ones
   * first) until a majority is out of reach of those not asked yet (Corroboration.decide); with
   * `askReporter`, the reporter too (a later check: it may no longer show what it reported). The
   * endpoints a majority contradicts are counted, marked `disagreeing`, not read from for a while,
   * and named in a warning; a dispute (as many deny as show it) blames no one and is named in a
   * warning with both sides. `reporter` -1: not known any more (its report still counts as a voice).
   */
  readonly corroborate: (
    reporter: number,
    transactionHash: string,
    ask: (client: C, state: EndpointState) => Effect.Effect<Answer, ChainRpcError>,
    options?: { readonly askReporter?: boolean }
  ) => Effect.Effect<Verdict>
  /** The index of the endpoint with this label (labelOf), -1 when none has it (the configuration changed). */
  readonly indexOf: (label: string) => number
  /** The label (origin, numbered when shared) of an endpoint, as published. */
  readonly labelAt: (index: number) => string
  /** `call` on each of the endpoints `indices` at once: the successes; the failures are recorded. */
  readonly askAll: <A>(
    indices: ReadonlyArray<number>,
    call: (client: C) => Effect.Effect<A, ChainRpcError>
  ) => Effect.Effect<ReadonlyArray<{ readonly index: number; readonly value: A }>>
  /**
   * Every endpoint not backing off asked for its head, at once (with one endpoint, just it); the
   * head of the endpoint reads go to next, which is the one a lagging endpoint is measured against.
   */
  readonly head: <H>(call: (client: C) => Effect.Effect<H, ChainRpcError>, heightOf: (head: H) => bigint) => Effect.Effect<H, ChainRpcError>
  /** The endpoint reads went to last. */
  readonly inUse: () => number | undefined
  /** The endpoints' states now, and a change of them (a hash vote's outcome). */
  readonly states: () => ReadonlyArray<EndpointState>
  readonly update: (change: (states: ReadonlyArray<EndpointState>) => ReadonlyArray<EndpointState>) => void
  /** The endpoints' states, to publish (URLs cut to their origin), with the disputed height if any. */
  readonly report: (disagreement?: bigint) => EndpointsReport
}

/** The error when no endpoint answers, with each one's health. */
const noUsableEndpoint = (network: string, states: ReadonlyArray<EndpointState>, maxLag: bigint) =>
  new ChainRpcError({
    network,
    message: `no usable endpoint: ${states.map((state, index) => `${originOf(state.url)} ${healthOf(states, index, maxLag)}`).join(", ")}`
  })

/**
 * The failover of one network's endpoints, for MultiSource (the EVM and bitcoin sources, which add
 * a hash vote) and for Solana's client (read by commitment: no vote). `order` picks the endpoints a
 * request tries: `requestOrder` (the default) also retries a failed endpoint whose back-off is over,
 * for a process that does not poll heads; `readOrder` only those the last head round cleared.
 */
export const makeEndpointPool = <C>(options: {
  readonly network: string
  /** In order of preference. */
  readonly endpoints: ReadonlyArray<{ readonly url: string; readonly client: C }>
  readonly maxLag: bigint
  readonly order?: typeof requestOrder
  /** How long an endpoint a majority contradicted is not read from (default REFUSAL_MILLIS). */
  readonly quarantineMs?: number | undefined
}): EndpointPool<C> => {
  const { network, maxLag } = options
  const order = options.order ?? requestOrder
  const clients = options.endpoints.map((endpoint) => endpoint.client)
  let states: ReadonlyArray<EndpointState> = initialStates(options.endpoints.map((endpoint) => endpoint.url))
  let inUse: number | undefined

  const noneUsable = () => noUsableEndpoint(network, states, maxLag)

  const runAt = <A>(call: (client: C) => Effect.Effect<A, ChainRpcError>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      let last: ChainRpcError | undefined
      for (const index of order(states, now, maxLag)) {
        const result = yield* Effect.result(call(clients[index]))
        if (result._tag === "Success") {
          states = withSuccess(states, index)
          inUse = index
          return { index, value: result.success }
        }
        last = result.failure
        states = withFailure(states, index, result.failure, now)
      }
      return yield* Effect.fail(last ?? noneUsable())
    })

  const run = <A>(call: (client: C) => Effect.Effect<A, ChainRpcError>): Effect.Effect<A, ChainRpcError> => Effect.map(runAt(call), (answer) => answer.value)

  const { corroborate } = makeCorroboration({
    network,
    maxLag,
    clients,
    quarantineMs: options.quarantineMs,
    states: () => states,
    setStates: (next) => {
      states = next
    }
  })

  const askAll = <A>(indices: ReadonlyArray<number>, call: (client: C) => Effect.Effect<A, ChainRpcError>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const answers = yield* Effect.forEach(indices, (index) => Effect.map(Effect.result(call(clients[index])), (result) => ({ index, result })), {
        concurrency: "unbounded"
      })
      const succeeded: Array<{ readonly index: number; readonly value: A }> = []
      for (const { index, result } of answers) {
        if (result._tag === "Success") succeeded.push({ index, value: result.success })
        else states = withFailure(states, index, result.failure, now)
      }
      return succeeded
    })

  const head = <H>(call: (client: C) => Effect.Effect<H, ChainRpcError>, heightOf: (head: H) => bigint) =>
    Effect.gen(function*() {
      if (clients.length === 1) {
        const value = yield* run(call)
        states = withHead(states, 0, heightOf(value))
        return value
      }
      const now = yield* Clock.currentTimeMillis
      const asked = states.flatMap((state, index) => (isAvailable(state, now) ? [index] : []))
      const heads = new Map<number, H>()
      for (const { index, value } of yield* askAll(asked, call)) {
        heads.set(index, value)
        states = withHead(states, index, heightOf(value))
      }
      const chosen = readOrder(states, now, maxLag).find((index) => heads.has(index))
      if (chosen === undefined) return yield* Effect.fail(noneUsable())
      inUse = chosen
      return heads.get(chosen)!
    })

  return {
    run,
    runAt,
    corroborate,
    indexOf: (label) => states.findIndex((_, index) => labelOf(states, index) === label),
    labelAt: (index) => labelOf(states, index),
    askAll,
    head,
    states: () => states,
    inUse: () => inUse,
    update: (change) => {
      states = change(states)
    },
    report: (disagreement) => reportOf(states, inUse, disagreement, maxLag)
  }
}

/** What corroboration reads and changes of its pool: the endpoints' clients and their states. */
interface CorroborationPool<C> {
  readonly network: string
  readonly maxLag: bigint
  readonly clients: ReadonlyArray<C>
  readonly quarantineMs: number | undefined
  readonly states: () => ReadonlyArray<EndpointState>
  readonly setStates: (next: ReadonlyArray<EndpointState>) => void
}

/** A pool's `corroborate` (see EndpointPool): the witnesses asked, the vote, and the endpoints it outvotes. */
const makeCorroboration = <C>(pool: CorroborationPool<C>): Pick<EndpointPool<C>, "corroborate"> => {
  /**
   * The endpoints other than `reporter` that may be asked now: the ones reads would go to first,
   * one caught reporting a made-up transfer last (not read from, it may still confirm a real one).
   */
  const witnesses = (reporter: number, now: number) => {
    const available = pool.states().flatMap((state, index) => (isAvailable(state, now) && index !== reporter ? [index] : []))
    const preferred = [...new Set([...readOrder(pool.states(), now, pool.maxLag), ...available])].filter((index) => available.includes(index))
    return [...preferred.filter((index) => !isRefused(pool.states()[index], now)), ...preferred.filter((index) => isRefused(pool.states()[index], now))] as Array<number>
  }

  const labels = (indices: ReadonlyArray<number>) => indices.filter((index) => index >= 0).map((index) => labelOf(pool.states(), index)).join(", ")

  /** The endpoints a majority contradicted about a transfer: counted, not read from for a while, named. */
  const outvote = (outvoted: ReadonlyArray<number>, transactionHash: string, now: number, verdict: Verdict) =>
    Effect.suspend(() => {
      const blamed = outvoted.filter((index) => index >= 0)
      if (blamed.length === 0) return Effect.void
      for (const index of blamed) pool.setStates(withRefusal(pool.states(), index, now, pool.quarantineMs))
      const message = verdict === "refused"
        ? "An endpoint reported a transfer a majority of the endpoints denies: not credited, and the endpoint is marked disagreeing"
        : "An endpoint denied a transfer a majority of the endpoints shows: the endpoint is marked disagreeing"
      return Effect.logWarning(message).pipe(Effect.annotateLogs({ network: pool.network, endpoint: labels(blamed), transactionHash }))
    })

  const corroborate = (
    reporter: number,
    transactionHash: string,
    ask: (client: C, state: EndpointState) => Effect.Effect<Answer, ChainRpcError>,
    askOptions?: { readonly askReporter?: boolean }
  ) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const asked = witnesses(reporter, now)
      if (askOptions?.askReporter === true && reporter >= 0 && isAvailable(pool.states()[reporter], now)) asked.push(reporter)
      const votes: Array<Vote> = []
      for (const [at, index] of asked.entries()) {
        const result = yield* Effect.result(ask(pool.clients[index], pool.states()[index]))
        if (result._tag === "Failure") pool.setStates(withFailure(pool.states(), index, result.failure, now))
        else votes.push({ index, answer: result.success })
        if (isSettled(reporter, votes, asked.length - at - 1)) break
      }
      const decision = decide(reporter, votes)
      yield* outvote(decision.outvoted, transactionHash, now, decision.verdict)
      if (decision.verdict === "disputed") {
        yield* Effect.logWarning("Endpoints dispute a transfer with no majority: detected at 0 confirmations, no endpoint blamed; add an endpoint to settle it").pipe(
          Effect.annotateLogs({ network: pool.network, transactionHash, reportedBy: reporter >= 0 ? labelOf(pool.states(), reporter) : "an earlier endpoint",
            deniedBy: labels(decision.deniers) })
        )
      }
      return decision.verdict
    })

  return { corroborate }
}
