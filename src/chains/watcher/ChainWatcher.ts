import { Effect } from "effect"
import type { Cursor } from "./ChainRepo.ts"
import type { BlockHeader, ChainRpcError, ChainSource } from "../source/ChainSource.ts"
import { makeReorgSettlement } from "./ReorgSettlement.ts"
import type { WatchIndex } from "./WatchedOptions.ts"
import type { WatchScope } from "./WatchScope.ts"
import { type AppliedOutcome, makeWatcherContext, type WatcherContext } from "./WatcherContext.ts"
import { watchMempool } from "./WatcherMempool.ts"
import { identityOf, makeRecheck, recheckContextOf } from "./WatcherRecheck.ts"
import { checkReorgs } from "./WatcherReorg.ts"
import { confirmEvidence, makeDepthRescan, rereadReturning, scanNewBlocks } from "./WatcherScan.ts"

/** What one poll did, for logs, metrics and tests. */
export interface PollReport {
  readonly network: string
  readonly headHeight: bigint
  readonly processedHeight: bigint
  readonly evidence: number
  readonly unmatched: number
  readonly invalidated: number
  readonly confirmationsUpdated: number
  /** Unconfirmed transfers to payable keys seen in the mempool (chains that watch one). */
  readonly mempoolSeen: number
  /** Transactions paying a watched refund found in the new blocks. */
  readonly refundsSeen: number
  /** Refunds sent back to `requested` because a reorganisation orphaned their transaction's block. */
  readonly refundsReverted: number
}

/** One network's watcher: `poll` runs one pass (reorg check, new blocks, confirmations). */
export interface ChainWatcher {
  readonly network: string
  /** Its network and mode: a testnet watcher (`livemode` false) runs beside the network's live one. */
  readonly scope: WatchScope
  readonly poll: Effect.Effect<PollReport, ChainRpcError>
}

export interface ChainWatcherOptions {
  readonly source: ChainSource
  readonly index: WatchIndex
  /** False: the network's testnet watcher, for test invoices (default true). */
  readonly livemode?: boolean | undefined
  /** Blocks before the first head to scan on the very first poll of a network. */
  readonly initialLookback: bigint
  /** How many blocks of hashes to keep below the cursor: the deepest reorg handled. */
  readonly keepDepth: bigint
  /** Blocks deep a range is read again from a second endpoint (the network's confirmations); absent: not read again. */
  readonly rescanDepth?: bigint
  /** How long a transfer may wait for corroboration before a warning names it (default 10 minutes). */
  readonly waitingWarningMs?: number | undefined
  /** Called once per applied evidence or unmatched deposit (metrics). */
  readonly onApplied?: (outcome: AppliedOutcome) => Effect.Effect<void>
}

const startingCursor = (context: WatcherContext, head: BlockHeader, lookback: bigint) =>
  Effect.gen(function*() {
    const height = head.height > lookback ? head.height - lookback : 0n
    const block = height === head.height ? head : yield* context.blockOrFail(height)
    yield* Effect.logInfo("Chain watcher starts").pipe(Effect.annotateLogs({ network: context.network, height: height.toString() }))
    return { height: block.height, hash: block.hash, chainTime: block.time }
  })

/** The endpoints' states and the payments waiting for corroboration, written only when they changed (for the dashboard and /metrics). */
const endpointsPublisher = ({ source, repo, scope }: WatcherContext) => {
  let published: string | undefined
  return source.endpoints === undefined ? Effect.void : Effect.gen(function*() {
    const backlog = yield* repo.corroborationBacklog(scope)
    const awaitingCorroboration = { payments: backlog.waiting, disputed: backlog.disputed, since: backlog.since?.toISOString() ?? null }
    const report = JSON.stringify({ ...(yield* source.endpoints!), awaitingCorroboration })
    if (report === published) return
    yield* repo.saveEndpoints(scope, report)
    published = report
  })
}

const idleReport = (network: string, head: BlockHeader, cursor: Cursor): PollReport => ({
  network,
  headHeight: head.height,
  processedHeight: cursor.height,
  evidence: 0,
  unmatched: 0,
  invalidated: 0,
  confirmationsUpdated: 0,
  mempoolSeen: 0,
  refundsSeen: 0,
  refundsReverted: 0
})

/** The mempool step where the chain has one and the scan reached the head; the cursor's chain time moves to the read. */
const mempoolStep = (context: WatcherContext, scanned: Cursor, head: BlockHeader) =>
  Effect.gen(function*() {
    const mempool = context.source.mempool
    if (mempool === undefined || scanned.height !== head.height) return { cursor: scanned, invalidated: 0, seen: 0 }
    const watched = yield* watchMempool(context, mempool)
    // Blocks come minutes apart, the mempool is read now: what is processed reaches the read.
    const cursor = watched.readAt > scanned.chainTime ? { ...scanned, chainTime: watched.readAt } : scanned
    return { cursor, invalidated: watched.invalidated, seen: watched.seen }
  })

/**
 * The shared watcher loop body, the same for every chain family, as named steps: read the head;
 * reorg (WatcherReorg: the cursor and the blocks of unconfirmed evidence against the chain, a
 * rewind past a reorganisation); scan (WatcherScan: new blocks, the transfers corroborated by a
 * second endpoint where there are several, what pays a watched option into `PaymentEvidence`,
 * deposits that pay none, what pays a watched refund to `RefundWatch`); confirmations; mempool
 * (WatcherMempool); settle reorgs; save the cursor. Every step is idempotent, so a crash anywhere
 * replays harmlessly.
 */
export const makeChainWatcher = (options: ChainWatcherOptions) =>
  Effect.gen(function*() {
    const context = yield* makeWatcherContext(options)
    const settleReorgs = yield* makeReorgSettlement
    const recheck = makeRecheck(recheckContextOf(context), options.waitingWarningMs)
    const rescanAtDepth = options.rescanDepth === undefined ? () => Effect.succeed(0) : makeDepthRescan(context, options.rescanDepth)
    const { source, network, scope, repo } = context

    const poll = Effect.gen(function*() {
      const head = yield* source.head
      const saved = (yield* repo.cursor(scope)) ?? (yield* startingCursor(context, head, options.initialLookback))
      if (head.height < saved.height) {
        // A lagging node behind a load balancer: wait for it rather than rewind without a hash check.
        yield* Effect.logWarning("The node's head is behind the cursor; waiting").pipe(
          Effect.annotateLogs({ network, head: head.height.toString(), cursor: saved.height.toString() })
        )
        return idleReport(network, head, saved)
      }
      const checked = yield* checkReorgs(context, head, saved)
      const scanned = yield* scanNewBlocks(context, checked.cursor, head, checked.awaiting.refunds)
      const found = (yield* rescanAtDepth(scanned.cursor, head)) + (yield* rereadReturning(context, scanned.cursor, head))
      const rechecked = yield* recheck
      const confirmationsUpdated = (yield* confirmEvidence(context, checked.awaiting.evidence, head, rechecked.still)) +
        (yield* context.refunds.confirm(checked.awaiting.refunds.filter((refund) => !rechecked.still.has(identityOf(refund))), head))
      const mempool = yield* mempoolStep(context, scanned.cursor, head)
      // After the scan and the mempool: evidence mined again, or back in the mempool, is revived by now.
      yield* settleReorgs(scope, scanned.cursor.height, context.rejected)
      yield* repo.saveProgress(scope, { cursor: mempool.cursor, headHeight: head.height, headTime: head.time })
      if (scanned.cursor.height > options.keepDepth) yield* repo.forgetBlocksBelow(scope, scanned.cursor.height - options.keepDepth)
      return {
        ...idleReport(network, head, scanned.cursor),
        evidence: scanned.evidence + found,
        unmatched: scanned.unmatched,
        invalidated: checked.invalidated + mempool.invalidated + rechecked.invalidated,
        confirmationsUpdated,
        mempoolSeen: mempool.seen,
        refundsSeen: scanned.refundsSeen,
        refundsReverted: checked.refundsReverted
      } satisfies PollReport
    }).pipe(Effect.ensuring(endpointsPublisher(context)), Effect.withSpan("ChainWatcher.poll", { attributes: { network, livemode: scope.livemode } }))

    const watcher: ChainWatcher = { network, scope, poll }
    return watcher
  })
