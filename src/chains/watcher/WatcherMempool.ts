import { Clock, Effect } from "effect"
import type { MempoolSource, PendingTransfer } from "../source/ChainSource.ts"
import type { WatcherContext } from "./WatcherContext.ts"

const REPLACED_OR_DROPPED = "replaced_or_dropped"

const identity = (transfer: { transactionHash: string; outputIndex: number }) => `${transfer.transactionHash}:${transfer.outputIndex}`

/** Mempool evidence no longer listed and gone from the node (replaced, evicted) is invalidated; returns the identities known and how many. */
const invalidateGone = (context: WatcherContext, mempool: MempoolSource, seen: ReadonlySet<string>) =>
  Effect.gen(function*() {
    const { network, scope, evidence, applied, rejected } = context
    const known = new Set<string>()
    let invalidated = 0
    for (const waiting of yield* context.repo.inMempool(scope)) {
      known.add(identity(waiting))
      if (seen.has(identity(waiting))) continue
      // Not listed for a payable key: still waiting, mined since (the next scan records it), or gone.
      if ((yield* mempool.place(waiting.transactionHash)) !== "unknown") continue
      yield* evidence.invalidate({ network, transactionHash: waiting.transactionHash, outputIndex: waiting.outputIndex, reason: REPLACED_OR_DROPPED }).pipe(
        Effect.andThen(applied("invalidated")),
        Effect.catchTag("EvidenceRejected", (error) => rejected(error, waiting.transactionHash))
      )
      invalidated++
    }
    return { known, invalidated }
  })

/** The new pending transfers that pay an option (a deposit that matches none is recorded once it is mined, with its block). */
const payingOptions = (context: WatcherContext, pending: ReadonlyArray<PendingTransfer>, known: ReadonlySet<string>) =>
  pending.flatMap((transfer) => {
    if (known.has(identity(transfer))) return []
    const entries = context.index.lookup(transfer.key)
    if (entries === undefined) return []
    const classified = context.source.classify(transfer, entries)
    return classified._tag === "Evidence" ? [{ transfer, option: classified.option }] : []
  })

/**
 * The mempool step: unconfirmed transfers to keys still payable, each 0-confirmation evidence
 * unless a majority of the other endpoints denies it (with several endpoints; one not corroborated
 * yet is marked as waiting, WatcherRecheck), its first sighting its chain time; evidence that left the
 * mempool without being mined (replaced, evicted) is invalidated before any replacement is
 * counted, so a replacement is never counted twice.
 */
export const watchMempool = (context: WatcherContext, mempool: MempoolSource) =>
  Effect.gen(function*() {
    const readAt = new Date(yield* Clock.currentTimeMillis)
    yield* context.index.refresh
    const now = readAt.getTime()
    const reported = yield* mempool.pending({ some: (limit) => context.index.payableKeys(now, limit), has: (key) => context.index.isPayable(key, now) })
    const { known, invalidated } = yield* invalidateGone(context, mempool, new Set(reported.transfers.map(identity)))
    const candidates = payingOptions(context, reported.transfers, known)
    const verdicts = reported.corroborate === undefined
      ? candidates.map(() => "confirmed" as const)
      : yield* reported.corroborate(candidates.map((candidate) => candidate.transfer))
    for (const [at, { transfer, option }] of candidates.entries()) {
      // Denied by a majority (or disputed, or no other endpoint could tell): a mempool sighting is
      // 0 confirmations anyway; what waits is marked so that its block does not count until corroborated.
      if (verdicts[at] === "refused") continue
      if (verdicts[at] !== "confirmed") {
        yield* context.repo.markUncorroborated(context.scope, {
          transactionHash: transfer.transactionHash,
          outputIndex: transfer.outputIndex,
          reporter: reported.reporter ?? "",
          token: transfer.token,
          disputed: verdicts[at] === "disputed"
        })
      }
      yield* context.evidence.record({
        paymentOptionId: option.optionId,
        transactionHash: transfer.transactionHash,
        outputIndex: transfer.outputIndex,
        amountAtomic: transfer.amountAtomic,
        confirmations: 0,
        observedAt: readAt,
        destinationAddress: transfer.toAddress,
        inMempool: true
      }).pipe(
        Effect.andThen(context.applied("evidence")),
        Effect.catchTag("EvidenceRejected", (error) => context.rejected(error, transfer.transactionHash))
      )
    }
    return { readAt, invalidated, seen: reported.transfers.length }
  })
