import { Clock, Effect } from "effect"
import { ChainRpcError } from "./ChainSource.ts"
import { type Answer, type Verdict, verdictOf } from "./Corroboration.ts"
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
   * first) until one confirms it (Corroboration.ts). Refused when someone denied it and no one
   * confirmed: the reporter is then counted, marked `disagreeing`, not read from for a while, and
   * named in a warning. Unanswered when no other endpoint could tell.
   */
  readonly corroborate: (
    reporter: number,
    transactionHash: string,
    ask: (client: C, state: EndpointState) => Effect.Effect<Answer, ChainRpcError>
  ) => Effect.Effect<Verdict>
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
  /** The endpoints' states now, and a change of them (a hash vote's outcome). */
  readonly states: () => ReadonlyArray<EndpointState>
  readonly update: (change: (states: ReadonlyArray<EndpointState>) => ReadonlyArray<EndpointState>) => void
  /** The endpoints' states, to publish (URLs cut to their origin), with the disputed height if any. */
  readonly report: (disagreement?: bigint) => EndpointsReport
}

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
}): EndpointPool<C> => {
  const { network, maxLag } = options
  const order = options.order ?? requestOrder
  const clients = options.endpoints.map((endpoint) => endpoint.client)
  let states: ReadonlyArray<EndpointState> = initialStates(options.endpoints.map((endpoint) => endpoint.url))
  let inUse: number | undefined

  const noneUsable = () =>
    new ChainRpcError({
      network,
      message: `no usable endpoint: ${states.map((state, index) => `${originOf(state.url)} ${healthOf(states, index, maxLag)}`).join(", ")}`
    })

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

  /**
   * The endpoints other than `reporter` that may be asked now: the ones reads would go to first,
   * one caught reporting a made-up transfer last (not read from, it may still confirm a real one).
   */
  const witnesses = (reporter: number, now: number) => {
    const available = states.flatMap((state, index) => (isAvailable(state, now) && index !== reporter ? [index] : []))
    const preferred = [...new Set([...readOrder(states, now, maxLag), ...available])].filter((index) => available.includes(index))
    return [...preferred.filter((index) => !isRefused(states[index], now)), ...preferred.filter((index) => isRefused(states[index], now))]
  }

  const refuse = (reporter: number, transactionHash: string, now: number) =>
    Effect.suspend(() => {
      states = withRefusal(states, reporter, now)
      return Effect.logWarning("An endpoint reported a transfer the other endpoints deny: not credited, and the endpoint is marked disagreeing").pipe(
        Effect.annotateLogs({ network, endpoint: labelOf(states, reporter), transactionHash })
      )
    })

  const corroborate = (reporter: number, transactionHash: string, ask: (client: C, state: EndpointState) => Effect.Effect<Answer, ChainRpcError>) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const answers: Array<Answer> = []
      for (const index of witnesses(reporter, now)) {
        const result = yield* Effect.result(ask(clients[index], states[index]))
        if (result._tag === "Failure") {
          states = withFailure(states, index, result.failure, now)
          continue
        }
        answers.push(result.success)
        if (result.success === "same") break
      }
      const verdict = verdictOf(answers)
      if (verdict === "refused") yield* refuse(reporter, transactionHash, now)
      return verdict
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
    askAll,
    head,
    states: () => states,
    update: (change) => {
      states = change(states)
    },
    report: (disagreement) => reportOf(states, inUse, disagreement, maxLag)
  }
}
