import type { Connection, Finality } from "@solana/web3.js"
import type { Effect } from "effect"
import type { ChainRpcError } from "../source/ChainSource.ts"
import type { Answer, Verdict } from "../source/Corroboration.ts"
import type { EndpointsReport } from "../source/EndpointSelection.ts"

export const NETWORK = "solana"

/**
 * The watcher reads at `confirmed`: a supermajority has voted on the slot and a rollback is
 * extremely rare, so a payment shows up within about a second. Confirmations are counted from it
 * (see SolanaWatcher); `finalized` is what the required confirmations stand for.
 */
export const COMMITMENT: Finality = "confirmed"

/** One RPC call on an endpoint's connection. */
export type SolanaCall = <A>(method: string, run: (connection: Connection) => Promise<A>) => Effect.Effect<A, ChainRpcError>

/** The RPC over a network's endpoints (SolanaRpcLive.ts implements it; SolanaRpc provides it). */
export interface SolanaRpcClient {
  /**
   * One RPC call on the first usable endpoint, failing over to the next ones on an error, a
   * time-out (the configured one, or `timeoutMs` per endpoint) or HTTP 429 (Retry-After honoured);
   * a failure of all is a ChainRpcError naming the method.
   */
  readonly call: <A>(
    method: string,
    run: (connection: Connection) => Promise<A>,
    options?: { readonly timeoutMs?: number }
  ) => Effect.Effect<A, ChainRpcError>
  /** `call`, saying which endpoint answered (the reporter of what it read). */
  readonly callAt: <A>(method: string, run: (connection: Connection) => Promise<A>) => Effect.Effect<{ readonly reporter: number; readonly value: A }, ChainRpcError>
  /** A usable endpoint other than the one reads go to (the depth re-read's), undefined when there is none. */
  readonly otherEndpoint: Effect.Effect<number | undefined>
  /** Each endpoint now: "out" while marked `disagreeing` (quarantined), "usable" when reads may go to it, else "unfit" (failing, lagging). */
  readonly standing: Effect.Effect<ReadonlyArray<"out" | "usable" | "unfit">>
  /** One call on endpoint `index` only: its answer, or undefined when it failed (the failure is recorded). */
  readonly callOn: <A>(index: number, method: string, run: (connection: Connection) => Promise<A>) => Effect.Effect<A | undefined>
  /** Whether several endpoints are configured: what one reports is then corroborated by another. */
  readonly several: boolean
  /**
   * What endpoint `reporter` reported (transaction `signature`), asked of the others one after the
   * other until a majority is settled (EndpointPool.corroborate): `ask` gets the endpoint's call and
   * its last slot. Those a majority contradicts are marked `disagreeing`.
   */
  readonly corroborate: (
    reporter: number,
    signature: string,
    ask: (call: SolanaCall, slot: bigint | undefined) => Effect.Effect<Answer, ChainRpcError>,
    options?: { readonly askReporter?: boolean }
  ) => Effect.Effect<Verdict>
  /** An endpoint's label (its origin), and back (-1 when none has it any more). */
  readonly labelAt: (index: number) => string
  readonly indexOf: (label: string) => number
  /**
   * The same call on every endpoint at once: every answer, or undefined when one did not answer. For
   * what one endpoint alone must not decide, such as that a transaction is gone.
   */
  readonly everyEndpoint: <A>(method: string, run: (connection: Connection) => Promise<A>) => Effect.Effect<ReadonlyArray<A> | undefined>
  /** The slot at COMMITMENT, asked of every endpoint not backing off: the one of the endpoint reads go to. */
  readonly slot: Effect.Effect<number, ChainRpcError>
  /** The endpoints' states, as the watcher publishes them. */
  readonly endpoints: Effect.Effect<EndpointsReport>
}
