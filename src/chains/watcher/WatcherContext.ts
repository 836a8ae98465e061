import { Effect } from "effect"
import { type EvidenceRejected, PaymentEvidence } from "../../invoices/PaymentEvidence.ts"
import { ChainRepo } from "./ChainRepo.ts"
import { type BlockHeader, ChainRpcError, type ChainSource } from "../source/ChainSource.ts"
import { makeRefundObservation } from "./RefundMatching.ts"
import type { WatchIndex } from "./WatchedOptions.ts"
import type { WatchScope } from "./WatchScope.ts"

/** What a chain watcher did with one observation (for metrics). */
export type AppliedOutcome = "evidence" | "unmatched" | "invalidated" | "rejected"

/** What every step of the shared watcher loop (ChainWatcher.ts) works with: one network's source, index, repositories. */
export interface WatcherContext {
  /** The chain's network name (what evidence and logs name); `scope` adds the mode, for the repositories. */
  readonly network: string
  readonly scope: WatchScope
  readonly source: ChainSource
  readonly index: WatchIndex
  readonly repo: ChainRepo["Service"]
  readonly evidence: PaymentEvidence["Service"]
  readonly refunds: Effect.Success<ReturnType<typeof makeRefundObservation>>
  readonly applied: (outcome: AppliedOutcome) => Effect.Effect<void>
  /** Logs a refusal of PaymentEvidence (and counts it); the poll goes on. */
  readonly rejected: (error: EvidenceRejected, transactionHash: string) => Effect.Effect<void>
  /** The block at `height`, which the node must have. */
  readonly blockOrFail: (height: bigint) => Effect.Effect<BlockHeader, ChainRpcError>
}

export const makeWatcherContext = (options: {
  readonly source: ChainSource
  readonly index: WatchIndex
  /** False: the testnet watcher of test invoices (default true). */
  readonly livemode?: boolean | undefined
  readonly onApplied?: ((outcome: AppliedOutcome) => Effect.Effect<void>) | undefined
}) =>
  Effect.gen(function*() {
    const { source, index } = options
    const network = source.network
    const scope: WatchScope = { network, livemode: options.livemode ?? true }
    const applied = options.onApplied ?? (() => Effect.void)
    const context: WatcherContext = {
      network,
      scope,
      source,
      index,
      repo: yield* ChainRepo,
      evidence: yield* PaymentEvidence,
      refunds: yield* makeRefundObservation(scope),
      applied,
      rejected: (error, transactionHash) =>
        Effect.logWarning(`Evidence refused: ${error.reason}`).pipe(
          Effect.annotateLogs({ network, livemode: scope.livemode, transactionHash }),
          Effect.andThen(applied("rejected"))
        ),
      blockOrFail: (height) =>
        Effect.flatMap(source.block(height), (block) =>
          block === undefined
            ? Effect.fail(new ChainRpcError({ network, message: `the node has no block at height ${height}` }))
            : Effect.succeed(block))
    }
    return context
  })
