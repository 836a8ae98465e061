import { Effect } from "effect"
import type { BlockRef, ChainEvidence, Cursor } from "./ChainRepo.ts"
import type { BlockHeader } from "../source/ChainSource.ts"
import type { WatcherContext } from "./WatcherContext.ts"

const REORG = "chain_reorganization"

/** The highest remembered block below `mismatchHeight` that the chain still has; undefined when none is. */
const forkBelow = ({ network, scope, repo, source }: WatcherContext, mismatchHeight: bigint) =>
  Effect.gen(function*() {
    for (const remembered of yield* repo.blocksBelow(scope, mismatchHeight)) {
      const onChain = yield* source.block(remembered.height)
      if (onChain?.hash === remembered.hash) return remembered as BlockRef
    }
    yield* Effect.logError("Reorganisation deeper than the remembered blocks; rewinding to the block below it").pipe(
      Effect.annotateLogs({ network, height: mismatchHeight.toString() })
    )
    return undefined
  })

/** Invalidates the evidence and unmatched deposits above the fork; returns how many. */
const invalidateAbove = (context: WatcherContext, fork: BlockHeader) =>
  Effect.gen(function*() {
    const { network, scope, repo, evidence, applied, rejected } = context
    let invalidated = 0
    for (const orphan of yield* repo.evidenceAbove(scope, fork.height)) {
      // The remembered fork may lie below the true one; the block below the orphan's own never does,
      // so the wait for a re-inclusion (see ReorgSettlement) is never cut short.
      const reorgPoint = orphan.blockHeight - 1n > fork.height ? orphan.blockHeight - 1n : fork.height
      yield* evidence.invalidate({ network, transactionHash: orphan.transactionHash, outputIndex: orphan.outputIndex, reason: REORG, reorgPoint }).pipe(
        Effect.andThen(applied("invalidated")),
        Effect.catchTag("EvidenceRejected", (error) => rejected(error, orphan.transactionHash))
      )
      invalidated++
    }
    return invalidated + (yield* repo.invalidateUnmatchedAbove(scope, fork.height, REORG))
  })

/** Walks back over remembered blocks to the highest one the chain still has; invalidates everything above it. */
export const rewind = (context: WatcherContext, mismatchHeight: bigint) =>
  Effect.gen(function*() {
    const { network, scope, repo, refunds } = context
    const fork = yield* forkBelow(context, mismatchHeight)
    const forkHeader = yield* context.blockOrFail(fork?.height ?? (mismatchHeight > 0n ? mismatchHeight - 1n : 0n))
    const invalidated = yield* invalidateAbove(context, forkHeader)
    const refundsReverted = yield* refunds.invalidateAbove(forkHeader.height)
    yield* repo.forgetBlocksAbove(scope, forkHeader.height)
    yield* Effect.logWarning("Chain reorganisation: rewound the cursor").pipe(
      Effect.annotateLogs({ network, from: mismatchHeight.toString(), to: forkHeader.height.toString(), invalidated, refundsReverted })
    )
    const cursor: Cursor = { height: forkHeader.height, hash: forkHeader.hash, chainTime: forkHeader.time }
    return { cursor, invalidated, refundsReverted }
  })

/** The blocks of unconfirmed evidence and refunds must still be the chain's: the lowest that is not is where a reorg begins. */
const firstOrphanedEvidence = (
  { source }: WatcherContext,
  awaiting: ReadonlyArray<Pick<ChainEvidence, "blockHeight" | "blockHash">>,
  cursor: Cursor
) =>
  Effect.gen(function*() {
    const byHeight = new Map<bigint, string>()
    for (const known of awaiting) if (known.blockHeight <= cursor.height) byHeight.set(known.blockHeight, known.blockHash)
    for (const height of [...byHeight.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))) {
      const onChain = yield* source.block(height)
      if (onChain?.hash !== byHeight.get(height)) return height
    }
    return undefined
  })

/**
 * The reorg step of a poll: the cursor's block and the blocks of unconfirmed evidence and refunds
 * checked against the chain, rewinding past a reorganisation; then what still awaits confirmations.
 */
export const checkReorgs = (context: WatcherContext, head: BlockHeader, saved: Cursor) =>
  Effect.gen(function*() {
    let cursor = saved
    let invalidated = 0
    let refundsReverted = 0
    const rewindFrom = (height: bigint) =>
      Effect.map(rewind(context, height), (rewound) => {
        cursor = rewound.cursor
        invalidated += rewound.invalidated
        refundsReverted += rewound.refundsReverted
      })
    const atCursor = cursor.height === head.height ? head : yield* context.source.block(cursor.height)
    if (atCursor?.hash !== cursor.hash) yield* rewindFrom(cursor.height)
    const awaitingNow = Effect.all({ evidence: context.repo.awaitingConfirmation(context.scope), refunds: context.refunds.awaiting })
    let awaiting = yield* awaitingNow
    const orphanedAt = yield* firstOrphanedEvidence(context, [...awaiting.evidence, ...awaiting.refunds], cursor)
    if (orphanedAt !== undefined) {
      yield* rewindFrom(orphanedAt)
      awaiting = yield* awaitingNow
    }
    return { cursor, invalidated, refundsReverted, awaiting }
  })
