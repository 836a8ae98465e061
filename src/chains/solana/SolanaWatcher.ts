import { Clock, Effect } from "effect"
import type { RefundTransfer, WatchedRefund } from "../../refunds/RefundWatch.ts"
import type { ChainWatcher, PollReport } from "../watcher/ChainWatcher.ts"
import { NETWORK } from "./SolanaCluster.ts"
import { identityOf, makeRecheck } from "../watcher/WatcherRecheck.ts"
import { confirm } from "./SolanaConfirm.ts"
import { recheckReceipt } from "./SolanaCorroboration.ts"
import { makeSolanaDepthRescan } from "./SolanaDepthRescan.ts"
import { makeSolanaQuarantineReread } from "./SolanaQuarantineReread.ts"
import { type ScanCounts, scanAccount, targets } from "./SolanaScan.ts"
import { blockTimeOf, makeSolanaWatcherContext, slotRef, type SolanaWatcherContext, type SolanaWatcherOptions } from "./SolanaWatcherContext.ts"

export type { SolanaWatcherOptions } from "./SolanaWatcherContext.ts"

/**
 * The Solana watcher. Solana has no logs to filter by token, and a payment is recognised by its
 * reference key, so instead of the block cursor of ChainWatcher it reads per token account: for
 * each merchant recipient's associated token account of each configured mint that has watched
 * options, the signatures since the last one processed (paged, newest first, per account and not
 * per invoice), then those transactions in batches, oldest first. A successful transaction that
 * carries a watched option's reference is evidence for that option; its amount is the account's
 * token balance change (pre/post token balances), not what an instruction claims. Confirmations are
 * the slot distance to the current slot at `confirmed` commitment, plus one; evidence that no longer
 * has a signature status is invalidated. Everything goes through PaymentEvidence, the one entry point.
 * Refund addresses' token accounts are read the same way, for the refunds' references (SolanaRefunds).
 * With several endpoints, the accounts are read again from another endpoint at depth (SolanaDepthRescan)
 * and from a quarantined one when it returns (SolanaQuarantineReread).
 */
export const makeSolanaWatcher = (options: SolanaWatcherOptions) =>
  Effect.gen(function*() {
    const context = yield* makeSolanaWatcherContext(options)
    const publishEndpoints = makeEndpointsPublisher(context)
    const { client } = context
    const recheck = makeRecheck({
      network: NETWORK,
      scope: context.scope,
      repo: context.chainRepo,
      evidence: context.evidence,
      applied: context.applied,
      rejected: context.rejected,
      recheck: client.several ? (row) => recheckReceipt(client, row) : undefined,
      invalidateRefund: context.refunds.invalidateTransaction
    }, options.waitingWarningMs)
    const rescanAtDepth = makeSolanaDepthRescan(context, options.rescanDepth ?? DEFAULT_RESCAN_DEPTH)
    const reread = makeSolanaQuarantineReread(context)
    const poll = pollOnce(context, recheck, rescanAtDepth, reread).pipe(Effect.ensuring(publishEndpoints),
      Effect.withSpan("SolanaWatcher.poll", { attributes: { livemode: options.livemode } }))
    const watcher: ChainWatcher = { network: NETWORK, scope: context.scope, poll }
    return watcher
  })

/** The slots a signature must be deep before it is read again from another endpoint, when not configured. */
const DEFAULT_RESCAN_DEPTH = 32

/** The endpoints' states, written when they changed (as ChainWatcher does for the other families). */
const makeEndpointsPublisher = (context: SolanaWatcherContext) => {
  let publishedEndpoints: string | undefined
  return Effect.gen(function*() {
    const backlog = yield* context.chainRepo.corroborationBacklog(context.scope)
    const awaitingCorroboration = { payments: backlog.waiting, disputed: backlog.disputed, since: backlog.since?.toISOString() ?? null }
    const report = JSON.stringify({ ...(yield* context.client.endpoints), ...(context.client.several ? { awaitingCorroboration } : {}) })
    if (report === publishedEndpoints) return
    yield* context.chainRepo.saveEndpoints(context.scope, report)
    publishedEndpoints = report
  })
}

/** Refunds whose transaction left the chain: their accounts are read again from the dropped transaction. */
const rescanDroppedRefunds = (
  context: SolanaWatcherContext,
  dropped: ReadonlyArray<RefundTransfer>,
  watchedRefunds: ReadonlyArray<WatchedRefund>,
  headSlot: number,
  notBefore: number,
  counts: ScanCounts
) =>
  Effect.gen(function*() {
    for (const gone of dropped) {
      // A transfer read while the refund was bound to the dropped one was passed by: its account is read again from there.
      const refund = watchedRefunds.find((watched) => watched.refundId === gone.refundId)
      if (refund === undefined || !context.options.mints.has(refund.token)) continue
      const since = { signature: gone.transactionHash, slot: gone.blockHeight }
      const scanned = yield* scanAccount(context, { recipient: refund.toAddress, mint: refund.token, payments: false, refunds: [refund] }, headSlot, notBefore, since)
      counts.refundsSeen += scanned.refundsSeen
    }
  })

/** Every watched token account, from its cursor. */
const scanTargets = (
  context: SolanaWatcherContext,
  watchedRefunds: ReadonlyArray<WatchedRefund>,
  headSlot: number,
  notBefore: number,
  counts: ScanCounts
) =>
  Effect.gen(function*() {
    for (const target of targets(context, watchedRefunds)) {
      const scanned = yield* scanAccount(context, target, headSlot, notBefore)
      counts.evidence += scanned.evidence
      counts.unmatched += scanned.unmatched
      counts.refundsSeen += scanned.refundsSeen
    }
  })

/** Every watched account has been read up to the head: chain time is the head slot's block time. */
const saveHead = (context: SolanaWatcherContext, headSlot: number, headTime: Date) => {
  const cursor = { height: BigInt(headSlot), hash: slotRef(headSlot), chainTime: headTime }
  return context.chainRepo.saveProgress(context.scope, { cursor, headHeight: BigInt(headSlot), headTime })
}

/** One poll: refunds' confirmations, the accounts' new transactions, evidence's confirmations, reorg settlement, progress. */
const pollOnce = (
  context: SolanaWatcherContext,
  recheck: ReturnType<typeof makeRecheck>,
  rescanAtDepth: ReturnType<typeof makeSolanaDepthRescan>,
  reread: ReturnType<typeof makeSolanaQuarantineReread>
) =>
  Effect.gen(function*() {
    const { client, refunds } = context
    const headSlot = yield* client.slot
    const headTime = yield* blockTimeOf(client, headSlot)
    yield* context.references.refresh
    yield* context.accounts.refresh
    const notBefore = (yield* Clock.currentTimeMillis) - context.options.retentionMillis
    const counts: ScanCounts = { evidence: 0, unmatched: 0, refundsSeen: 0 }
    // Before the scan: a refund whose transaction left the chain is requested again when its next payer is read.
    const waiting = new Set((yield* context.chainRepo.uncorroborated(context.scope)).map(identityOf))
    const refundsConfirmed = yield* refunds.confirm(headSlot, waiting)
    const watchedRefunds = yield* refunds.watched
    yield* rescanDroppedRefunds(context, refundsConfirmed.dropped, watchedRefunds, headSlot, notBefore, counts)
    const watchedTargets = targets(context, watchedRefunds)
    yield* reread.note(watchedTargets)
    yield* scanTargets(context, watchedRefunds, headSlot, notBefore, counts)
    counts.evidence += yield* rescanAtDepth(watchedTargets, headSlot)
    counts.evidence += yield* reread.readReturning(watchedTargets, headSlot)
    const rechecked = yield* recheck
    const confirmed = yield* confirm(context, headSlot, rechecked.still)
    const invalidated = confirmed.invalidated + rechecked.invalidated
    const confirmationsUpdated = confirmed.confirmationsUpdated
    yield* context.settleReorgs(context.scope, BigInt(headSlot), context.rejected)
    yield* saveHead(context, headSlot, headTime)
    return {
      network: NETWORK,
      headHeight: BigInt(headSlot),
      processedHeight: BigInt(headSlot),
      evidence: counts.evidence,
      unmatched: counts.unmatched,
      invalidated,
      confirmationsUpdated: confirmationsUpdated + refundsConfirmed.updated,
      mempoolSeen: 0,
      refundsSeen: counts.refundsSeen,
      refundsReverted: refundsConfirmed.reverted
    } satisfies PollReport
  })
