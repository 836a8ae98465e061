import { Clock, Effect } from "effect"
import { ChainRpcError } from "./ChainSource.ts"
import {
  type EndpointsReport,
  type EndpointState,
  healthOf,
  initialStates,
  isAvailable,
  originOf,
  readOrder,
  reportOf,
  requestOrder,
  withFailure,
  withHead,
  withSuccess
} from "./EndpointSelection.ts"

/** Several endpoints of one network behind one client of any kind (EndpointSelection has the rules). */
export interface EndpointPool<C> {
  /** `call` on the first usable endpoint, then on the next ones while it fails (an error, a time-out, HTTP 429). */
  readonly run: <A>(call: (client: C) => Effect.Effect<A, ChainRpcError>) => Effect.Effect<A, ChainRpcError>
  /**
   * Every endpoint not backing off asked for its head, at once (with one endpoint, just it); the
   * head of the endpoint reads go to next, which is the one a lagging endpoint is measured against.
   */
  readonly head: (call: (client: C) => Effect.Effect<bigint, ChainRpcError>) => Effect.Effect<bigint, ChainRpcError>
  /** The endpoints' states, to publish (URLs cut to their origin). */
  readonly report: Effect.Effect<EndpointsReport>
}

/**
 * The failover part of MultiSource for a family that is not read as a ChainSource (Solana, whose
 * watcher reads by commitment, not by block hash): no hash vote, so `disagreementHeight` stays null.
 */
export const makeEndpointPool = <C>(options: {
  readonly network: string
  /** In order of preference. */
  readonly endpoints: ReadonlyArray<{ readonly url: string; readonly client: C }>
  readonly maxLag: bigint
}): EndpointPool<C> => {
  const { network, maxLag } = options
  const clients = options.endpoints.map((endpoint) => endpoint.client)
  let states: ReadonlyArray<EndpointState> = initialStates(options.endpoints.map((endpoint) => endpoint.url))
  let inUse: number | undefined

  const noneUsable = () =>
    new ChainRpcError({
      network,
      message: `no usable endpoint: ${states.map((state, index) => `${originOf(state.url)} ${healthOf(states, index, maxLag)}`).join(", ")}`
    })

  const run = <A>(call: (client: C) => Effect.Effect<A, ChainRpcError>): Effect.Effect<A, ChainRpcError> =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      let last: ChainRpcError | undefined
      for (const index of requestOrder(states, now, maxLag)) {
        const result = yield* Effect.result(call(clients[index]))
        if (result._tag === "Success") {
          states = withSuccess(states, index)
          inUse = index
          return result.success
        }
        last = result.failure
        states = withFailure(states, index, result.failure, now)
      }
      return yield* Effect.fail(last ?? noneUsable())
    })

  const head = (call: (client: C) => Effect.Effect<bigint, ChainRpcError>) =>
    Effect.gen(function*() {
      if (clients.length === 1) {
        const height = yield* run(call)
        states = withHead(states, 0, height)
        return height
      }
      const now = yield* Clock.currentTimeMillis
      const asked = states.flatMap((state, index) => (isAvailable(state, now) ? [index] : []))
      const answers = yield* Effect.forEach(asked, (index) => Effect.map(Effect.result(call(clients[index])), (result) => ({ index, result })), {
        concurrency: "unbounded"
      })
      const heads = new Map<number, bigint>()
      for (const { index, result } of answers) {
        if (result._tag === "Success") {
          heads.set(index, result.success)
          states = withHead(states, index, result.success)
        } else {
          states = withFailure(states, index, result.failure, now)
        }
      }
      const chosen = readOrder(states, now, maxLag).find((index) => heads.has(index))
      if (chosen === undefined) return yield* Effect.fail(noneUsable())
      inUse = chosen
      return heads.get(chosen)!
    })

  return { run, head, report: Effect.sync(() => reportOf(states, inUse, undefined, maxLag)) }
}
