import { Connection } from "@solana/web3.js"
import { Clock, Duration, Effect } from "effect"
import { ChainRpcError } from "../source/ChainSource.ts"
import { makeEndpointPool } from "../source/EndpointPool.ts"
import { isRefused, isUsable, readOrder, retryAfterMillis } from "../source/EndpointSelection.ts"
import { COMMITMENT, NETWORK, type SolanaRpcClient } from "./SolanaCluster.ts"

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error)).split("\n")[0].slice(0, 300)

/** One endpoint: its connection, and the Retry-After of the last HTTP 429 it answered. */
const makeEndpoint = (rpcUrl: string, timeoutMs: number) => {
  let rateLimited: { readonly retryAfterMs: number | undefined } | undefined
  const connection = new Connection(rpcUrl, {
    commitment: COMMITMENT,
    // Back-off is the pool's (and the payer's retry): web3.js must not sleep on a 429 itself.
    disableRetryOnRateLimit: true,
    fetch: async (input, init) => {
      const response = await fetch(input, { ...init, signal: AbortSignal.timeout(timeoutMs) })
      // web3.js turns a 429 into an Error with its status only (and some methods re-wrap it as text).
      if (response.status === 429) rateLimited = { retryAfterMs: retryAfterMillis(response.headers.get("retry-after"), Date.now()) }
      return response
    }
  })
  const call = <A>(method: string, run: (connection: Connection) => Promise<A>, attemptMillis: number) =>
    Effect.suspend(() => {
      rateLimited = undefined
      return Effect.tryPromise({
        try: () => run(connection),
        catch: (error) =>
          new ChainRpcError({
            network: NETWORK,
            message: `${method}: ${messageOf(error)}`,
            ...(rateLimited === undefined ? {} : { rateLimited: true, retryAfterMs: rateLimited.retryAfterMs })
          })
      })
    }).pipe(
      Effect.timeoutOrElse({
        duration: Duration.millis(attemptMillis),
        orElse: () => Effect.fail(new ChainRpcError({ network: NETWORK, message: `${method}: timed out after ${attemptMillis} ms` }))
      })
    )
  return { call }
}

/**
 * The Solana RPC over the configured endpoints, preferred first (EndpointPool: the rules of
 * EndpointSelection). There is no block-hash vote: the watcher reads signatures and transactions
 * at `confirmed` commitment, where a supermajority of the cluster has voted, from one endpoint.
 */
export const makeSolanaRpcClient = (options: {
  readonly urls: ReadonlyArray<string>
  readonly timeoutMs: number
  readonly maxLag: bigint
  /** How long an endpoint a majority contradicted is not read from (CHECKOUT_ENDPOINT_QUARANTINE_MS). */
  readonly quarantineMs?: number | undefined
}): SolanaRpcClient => {
  const endpoints = options.urls.map((url) => ({ url, client: makeEndpoint(url, options.timeoutMs) }))
  const pool = makeEndpointPool({ network: NETWORK, endpoints, maxLag: options.maxLag, quarantineMs: options.quarantineMs })
  return {
    everyEndpoint: (method, run) =>
      Effect.map(
        pool.askAll(endpoints.map((_, index) => index), (endpoint) => endpoint.call(method, run, options.timeoutMs)),
        (answers) => (answers.length === endpoints.length ? answers.map((answer) => answer.value) : undefined)
      ),
    call: (method, run, callOptions) => pool.run((endpoint) => endpoint.call(method, run, callOptions?.timeoutMs ?? options.timeoutMs)),
    callAt: (method, run) => Effect.map(pool.runAt((endpoint) => endpoint.call(method, run, options.timeoutMs)), ({ index, value }) => ({ reporter: index, value })),
    several: endpoints.length > 1,
    otherEndpoint: Effect.map(Clock.currentTimeMillis, (now) => readOrder(pool.states(), now, options.maxLag).find((index) => index !== pool.inUse())),
    standing: Effect.map(Clock.currentTimeMillis,
      (now) =>
        pool.states().map((state, index, states) =>
          isRefused(state, now) || state.disagreesAt !== undefined ? "out" : isUsable(states, index, now, options.maxLag) ? "usable" : "unfit"
        )),
    callOn: (index, method, run) => Effect.map(pool.askAll([index], (endpoint) => endpoint.call(method, run, options.timeoutMs)), (answers) => answers[0]?.value),
    corroborate: (reporter, signature, ask, corroborateOptions) =>
      pool.corroborate(reporter, signature, (endpoint, state) => ask((method, run) => endpoint.call(method, run, options.timeoutMs), state.head), corroborateOptions),
    labelAt: pool.labelAt,
    indexOf: pool.indexOf,
    slot: Effect.map(pool.head((endpoint) => Effect.map(endpoint.call("getSlot", (connection) => connection.getSlot(COMMITMENT), options.timeoutMs), BigInt), (slot) => slot),
      Number),
    endpoints: Effect.sync(() => pool.report())
  }
}
