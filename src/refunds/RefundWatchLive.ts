import { Clock, Effect, Layer, Option } from "effect"
import type { RefundRecord } from "./Refund.ts"
import { type RefundTransfer, RefundWatch, type WatchedRefund } from "./RefundWatch.ts"
import { rejectOtherCandidates } from "./RefundChoice.ts"
import { RefundsRepo } from "./RefundsRepo.ts"

/** The token a watcher matches a refund's transfer in: EVM the lower-case contract, bitcoin "", solana the mint. */
const watchTokenOf = (refund: RefundRecord) =>
  refund.network === "bitcoin" ? "" : refund.network === "solana" ? refund.tokenContract ?? "" : (refund.tokenContract ?? "").toLowerCase()

const watchedOf = (refund: RefundRecord): WatchedRefund => ({
  refundId: refund.id,
  network: refund.network,
  key: refund.watchKey,
  token: watchTokenOf(refund),
  toAddress: refund.refundAddress,
  amountAtomic: refund.amountAtomic
})

const transferOf = (refund: RefundRecord): ReadonlyArray<RefundTransfer> =>
  refund.transactionHash === null || refund.outputIndex === null || refund.blockHeight === null || refund.blockHash === null
    ? []
    : [{
      refundId: refund.id,
      transactionHash: refund.transactionHash,
      outputIndex: refund.outputIndex,
      blockHeight: refund.blockHeight,
      blockHash: refund.blockHash,
      confirmations: refund.confirmations,
      observedAt: refund.sentAt ?? refund.updatedAt
    }]

/**
 * The refund after a watcher saw `transfer`, or undefined when it changes nothing: a refund no
 * longer requested or sent is left alone, and one bound to another transaction ignores this one
 * (the first matching transfer wins).
 */
export const observedRefund = (refund: RefundRecord, transfer: RefundTransfer, at: Date): RefundRecord | undefined => {
  if (refund.status !== "requested" && refund.status !== "sent") return undefined
  const bound = refund.status === "sent"
  if (bound && (refund.transactionHash !== transfer.transactionHash || refund.outputIndex !== transfer.outputIndex)) return undefined
  const completed = transfer.confirmations >= refund.requiredConfirmations
  const next: RefundRecord = {
    ...refund,
    status: completed ? "completed" : "sent",
    transactionHash: transfer.transactionHash,
    outputIndex: transfer.outputIndex,
    blockHeight: transfer.blockHeight,
    blockHash: transfer.blockHash,
    confirmations: transfer.confirmations,
    sentAt: refund.sentAt ?? transfer.observedAt,
    completedAt: completed ? at : null,
    updatedAt: at
  }
  const unchanged = next.status === refund.status && next.confirmations === refund.confirmations && next.blockHash === refund.blockHash &&
    next.blockHeight === refund.blockHeight
  return unchanged ? undefined : next
}

/** A refund whose transaction a reorganisation orphaned: requested again, its transaction forgotten. */
const orphaned = (refund: RefundRecord, at: Date): RefundRecord => ({
  ...refund,
  status: "requested",
  transactionHash: null,
  outputIndex: null,
  blockHeight: null,
  blockHash: null,
  confirmations: 0,
  sentAt: null,
  completedAt: null,
  updatedAt: at
})

/** RefundWatch over the refunds table: what the chain watchers look for and what they saw. */
export const RefundWatchLive = Layer.effect(
  RefundWatch,
  Effect.gen(function*() {
    const repo = yield* RefundsRepo
    const now = Effect.map(Clock.currentTimeMillis, (millis) => new Date(millis))
    /** Puts the locked refunds whose transaction is gone back to requested, logged; how many. */
    const requestAgain = (refunds: ReadonlyArray<RefundRecord>, message: string, annotations: Record<string, string>) =>
      Effect.gen(function*() {
        const at = yield* now
        for (const refund of refunds) yield* repo.update(orphaned(refund, at), refund.status, null)
        if (refunds.length > 0) {
          yield* Effect.logWarning(message).pipe(
            Effect.annotateLogs({ ...annotations, refunds: refunds.map((refund) => refund.id).join(",") })
          )
        }
        return refunds.length
      })
    return {
      watched: (networks, livemode) => networks.length === 0 ? Effect.succeed([]) : Effect.map(repo.watched(networks, livemode), (refunds) => refunds.map(watchedOf)),
      observe: Effect.fn("RefundWatch.observe")(function*(transfer: RefundTransfer) {
        yield* repo.withTransaction(Effect.gen(function*() {
          const found = yield* repo.lock(transfer.refundId)
          if (Option.isNone(found)) return
          const refund = found.value
          const at = yield* now
          const observed = observedRefund(refund, transfer, at)
          if (observed === undefined) return
          // Paying one of the option's pending requests is the merchant's choice of it (issue #52).
          const next = observed.chosenAt === null ? { ...observed, chosenAt: at } : observed
          const event = next.status === "completed" ? "refund_completed" : null
          yield* repo.update(next, refund.status, event)
          if (refund.chosenAt === null) yield* rejectOtherCandidates(repo, next, at)
        }))
      }),
      invalidateAbove: Effect.fn("RefundWatch.invalidateAbove")(function*(network: string, height: bigint, livemode: boolean) {
        return yield* repo.withTransaction(Effect.gen(function*() {
          const mined = yield* repo.lockMinedAbove(network, height, livemode)
          return yield* requestAgain(mined, "Refund transactions orphaned by a reorganisation: requested again", {
            network,
            height: height.toString()
          })
        }))
      }),
      invalidateTransaction: Effect.fn("RefundWatch.invalidateTransaction")(function*(network: string, transactionHash: string, livemode: boolean) {
        return yield* repo.withTransaction(Effect.gen(function*() {
          const bound = yield* repo.lockBoundTo(network, transactionHash, livemode)
          return yield* requestAgain(bound, "Refund transaction left the chain: requested again", { network, transactionHash })
        }))
      }),
      awaiting: (network, livemode) => Effect.map(repo.sent(network, livemode), (refunds) => refunds.flatMap(transferOf))
    }
  })
).pipe(Layer.provide(RefundsRepo.layer))
