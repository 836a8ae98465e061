import { Effect } from "effect"
import type { ChainEvidence } from "../watcher/ChainRepo.ts"
import { identityOf } from "../watcher/WatcherRecheck.ts"
import { goneFromChain, signatureStatuses } from "./SignatureStatus.ts"
import { NETWORK } from "./SolanaCluster.ts"
import type { SolanaWatcherContext } from "./SolanaWatcherContext.ts"

/** A confirmed transaction that is no longer on the chain was on a fork the cluster abandoned. */
const DROPPED = "chain_reorganization"

/**
 * Evidence without a signature status, double-checked before invalidating with every endpoint: a
 * failover to a node without this history must not drop a real payment. Gone means unknown to all
 * of them; while one does not answer, the evidence stays as it is until a later poll. True when invalidated.
 */
const invalidateIfGone = (context: SolanaWatcherContext, known: ChainEvidence) =>
  Effect.gen(function*() {
    if ((yield* goneFromChain(context.client, known.transactionHash)) !== true) return false
    yield* context.evidence.invalidate({
      network: NETWORK,
      transactionHash: known.transactionHash,
      outputIndex: known.outputIndex,
      reason: DROPPED,
      reorgPoint: known.blockHeight - 1n
    }).pipe(
      Effect.andThen(context.applied("invalidated")),
      Effect.catchTag("EvidenceRejected", (error) => context.rejected(error, known.transactionHash))
    )
    yield* context.repo.invalidateUnmatched(known.transactionHash, DROPPED)
    yield* Effect.logWarning("Solana transaction left the chain; its evidence is invalidated").pipe(
      Effect.annotateLogs({ transactionHash: known.transactionHash })
    )
    return true
  })

/** Confirmations of open evidence from the current slot; evidence whose transaction is gone is invalidated. */
export const confirm = (context: SolanaWatcherContext, headSlot: number, waiting: ReadonlySet<string>) =>
  Effect.gen(function*() {
    // What waits for corroboration stays at 0 confirmations (WatcherRecheck).
    const awaiting = (yield* context.chainRepo.awaitingConfirmation(context.scope)).filter((known) => !waiting.has(identityOf(known)))
    let confirmationsUpdated = 0
    let invalidated = 0
    const statuses = yield* signatureStatuses(context.client, awaiting.map((known) => known.transactionHash))
    for (const [index, known] of awaiting.entries()) {
      const status = statuses[index]
      if (status === null) {
        if (yield* invalidateIfGone(context, known)) invalidated++
        continue
      }
      const confirmations = Math.max(1, headSlot - status.slot + 1)
      if (confirmations <= known.confirmations) continue
      yield* context.evidence.record({ ...known, confirmations }).pipe(
        Effect.catchTag("EvidenceRejected", (error) => context.rejected(error, known.transactionHash))
      )
      confirmationsUpdated++
    }
    return { confirmationsUpdated, invalidated }
  })
