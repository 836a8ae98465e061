import { Clock, Effect } from "effect"
import { type EvidenceRejected, PaymentEvidence } from "../invoices/PaymentEvidence.ts"
import { type BlockRef, ChainRepo, type ChainEvidence, type Cursor } from "./ChainRepo.ts"
import type { BlockHeader, ChainSource, ChainRpcError, MempoolSource, Transfer } from "./ChainSource.ts"
import { ChainRpcError as RpcError } from "./ChainSource.ts"
import { makeRefundObservation, matchRefunds } from "./RefundMatching.ts"
import { makeReorgSettlement } from "./ReorgSettlement.ts"
import type { RefundTransfer } from "../refunds/RefundWatch.ts"
import type { WatchIndex } from "./WatchedOptions.ts"

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
  readonly poll: Effect.Effect<PollReport, ChainRpcError>
}

export interface ChainWatcherOptions {
  readonly source: ChainSource
  readonly index: WatchIndex
  /** Blocks before the first head to scan on the very first poll of a network. */
  readonly initialLookback: bigint
  /** How many blocks of hashes to keep below the cursor: the deepest reorg handled. */
  readonly keepDepth: bigint
  /** Called once per applied evidence or unmatched deposit (metrics). */
  readonly onApplied?: (outcome: "evidence" | "unmatched" | "invalidated" | "rejected") => Effect.Effect<void>
}

const REORG = "chain_reorganization"
const REPLACED_OR_DROPPED = "replaced_or_dropped"

/**
 * The shared watcher loop body, the same for every chain family: read the head; check the cursor
 * and the blocks of unconfirmed evidence against the chain and rewind past a reorganisation,
 * invalidating what it orphaned; scan new blocks and feed what pays a watched option into
 * `PaymentEvidence` (the one entry point); record deposits that pay none; report what pays a
 * watched refund to `RefundWatch` (RefundMatching.ts); update confirmations; save the cursor. Every
 * step is idempotent, so a crash anywhere replays harmlessly.
 */
export const makeChainWatcher = (options: ChainWatcherOptions) =>
  Effect.gen(function*() {
    const repo = yield* ChainRepo
    const evidence = yield* PaymentEvidence
    const settleReorgs = yield* makeReorgSettlement
    const { source, index } = options
    const network = source.network
    const refunds = yield* makeRefundObservation(network)
    const applied = options.onApplied ?? (() => Effect.void)

    const rejected = (error: EvidenceRejected, transactionHash: string) =>
      Effect.logWarning(`Evidence refused: ${error.reason}`).pipe(
        Effect.annotateLogs({ network, transactionHash }),
        Effect.andThen(applied("rejected"))
      )

    const blockOrFail = (height: bigint) =>
      Effect.flatMap(source.block(height), (block) =>
        block === undefined
          ? Effect.fail(new RpcError({ network, message: `the node has no block at height ${height}` }))
          : Effect.succeed(block))

    /** Walks back over remembered blocks to the highest one the chain still has; invalidates everything above it. */
    const rewind = (mismatchHeight: bigint) =>
      Effect.gen(function*() {
        let fork: BlockRef | undefined
        for (const remembered of yield* repo.blocksBelow(network, mismatchHeight)) {
          const onChain = yield* source.block(remembered.height)
          if (onChain?.hash === remembered.hash) {
            fork = remembered
            break
          }
        }
        if (fork === undefined) {
          yield* Effect.logError("Reorganisation deeper than the remembered blocks; rewinding to the block below it").pipe(
            Effect.annotateLogs({ network, height: mismatchHeight.toString() })
          )
        }
        const forkHeader = yield* blockOrFail(fork?.height ?? (mismatchHeight > 0n ? mismatchHeight - 1n : 0n))
        let invalidated = 0
        for (const orphan of yield* repo.evidenceAbove(network, forkHeader.height)) {
          // The remembered fork may lie below the true one; the block below the orphan's own never does,
          // so the wait for a re-inclusion (see settleReorgs) is never cut short.
          const reorgPoint = orphan.blockHeight - 1n > forkHeader.height ? orphan.blockHeight - 1n : forkHeader.height
          yield* evidence.invalidate({ network, transactionHash: orphan.transactionHash, outputIndex: orphan.outputIndex, reason: REORG, reorgPoint }).pipe(
            Effect.andThen(applied("invalidated")),
            Effect.catchTag("EvidenceRejected", (error) => rejected(error, orphan.transactionHash))
          )
          invalidated++
        }
        invalidated += yield* repo.invalidateUnmatchedAbove(network, forkHeader.height, REORG)
        const refundsReverted = yield* refunds.invalidateAbove(forkHeader.height)
        yield* repo.forgetBlocksAbove(network, forkHeader.height)
        yield* Effect.logWarning("Chain reorganisation: rewound the cursor").pipe(
          Effect.annotateLogs({ network, from: mismatchHeight.toString(), to: forkHeader.height.toString(), invalidated, refundsReverted })
        )
        const cursor: Cursor = { height: forkHeader.height, hash: forkHeader.hash, chainTime: forkHeader.time }
        return { cursor, invalidated, refundsReverted }
      })

    const observe = (transfer: Transfer, block: BlockHeader, head: BlockHeader) =>
      Effect.gen(function*() {
        const entries = index.lookup(transfer.key)
        if (entries === undefined) return "ignored" as const
        const classified = source.classify(transfer, entries)
        if (classified._tag === "Unmatched") {
          yield* repo.recordUnmatched({
            merchantId: classified.entry.merchantId,
            invoiceId: classified.entry.invoiceId,
            network,
            assetCode: classified.assetCode,
            tokenContract: transfer.token,
            toAddress: transfer.toAddress,
            transactionHash: transfer.transactionHash,
            outputIndex: transfer.outputIndex,
            amountAtomic: transfer.amountAtomic,
            blockHeight: transfer.blockHeight,
            blockHash: transfer.blockHash,
            chainTime: block.time,
            reason: classified.reason
          })
          yield* Effect.logWarning("Unmatched deposit to an invoice's address").pipe(
            Effect.annotateLogs({ network, invoiceId: classified.entry.invoiceId, reason: classified.reason, transactionHash: transfer.transactionHash })
          )
          yield* applied("unmatched")
          return "unmatched" as const
        }
        yield* evidence.record({
          paymentOptionId: classified.option.optionId,
          transactionHash: transfer.transactionHash,
          outputIndex: transfer.outputIndex,
          amountAtomic: transfer.amountAtomic,
          confirmations: Number(head.height - transfer.blockHeight + 1n),
          observedAt: block.time,
          destinationAddress: transfer.toAddress,
          blockHeight: transfer.blockHeight,
          blockHash: transfer.blockHash
        }).pipe(
          Effect.andThen(applied("evidence")),
          Effect.catchTag("EvidenceRejected", (error) => rejected(error, transfer.transactionHash))
        )
        return "evidence" as const
      })

    /** New blocks after the cursor, up to the head (or as far as the source covers in one request). */
    const scan = (cursor: Cursor, head: BlockHeader, sentRefunds: ReadonlyArray<RefundTransfer>) =>
      Effect.gen(function*() {
        const counts = { evidence: 0, unmatched: 0, refundsSeen: 0 }
        if (cursor.height >= head.height) return { cursor, ...counts }
        yield* index.refresh
        const scanned = yield* source.scan(cursor.height + 1n, head.height)
        const watched = scanned.transfers.filter((transfer) => index.lookup(transfer.key) !== undefined)
        const refunded = matchRefunds(scanned.transfers, yield* refunds.watched, sentRefunds)
        const kept = [...watched, ...refunded.map((match) => match.transfer)]
        const headers = new Map<bigint, BlockHeader>()
        for (const height of new Set([...kept.map((transfer) => transfer.blockHeight), scanned.to])) {
          headers.set(height, height === head.height ? head : yield* blockOrFail(height))
        }
        // A log whose block is no longer the chain's at its height was read from a branch being replaced.
        for (const transfer of kept) {
          if (headers.get(transfer.blockHeight)?.hash !== transfer.blockHash) {
            return yield* new RpcError({ network, message: `block ${transfer.blockHeight} changed during the poll` })
          }
        }
        for (const transfer of watched) {
          const outcome = yield* observe(transfer, headers.get(transfer.blockHeight)!, head)
          if (outcome !== "ignored") counts[outcome]++
        }
        yield* refunds.observe(refunded, headers, head)
        counts.refundsSeen = refunded.length
        const end = headers.get(scanned.to)!
        yield* repo.rememberBlocks(network, [...headers.values()].map((block) => ({ height: block.height, hash: block.hash })))
        return { cursor: { height: end.height, hash: end.hash, chainTime: end.time }, ...counts }
      })

    /** Re-reports evidence below its required confirmations with the count at this head. */
    const confirm = (awaiting: ReadonlyArray<ChainEvidence>, head: BlockHeader) =>
      Effect.gen(function*() {
        let updated = 0
        for (const known of awaiting) {
          const confirmations = Number(head.height - known.blockHeight + 1n)
          if (confirmations <= known.confirmations) continue
          yield* evidence.record({ ...known, confirmations }).pipe(
            Effect.catchTag("EvidenceRejected", (error) => rejected(error, known.transactionHash))
          )
          updated++
        }
        return updated
      })

    /** The blocks of unconfirmed evidence and refunds must still be the chain's: the lowest that is not is where a reorg begins. */
    const firstOrphanedEvidence = (awaiting: ReadonlyArray<Pick<ChainEvidence, "blockHeight" | "blockHash">>, cursor: Cursor) =>
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
     * Unconfirmed transfers to keys still payable: each becomes 0-confirmation evidence, its first
     * sighting its chain time; evidence that left the mempool without being mined (replaced, evicted)
     * is invalidated before any replacement is counted, so a replacement is never counted twice.
     */
    const watchMempool = (mempool: MempoolSource) =>
      Effect.gen(function*() {
        const readAt = new Date(yield* Clock.currentTimeMillis)
        yield* index.refresh
        const now = readAt.getTime()
        const pending = yield* mempool.pending({ some: (limit) => index.payableKeys(now, limit), has: (key) => index.isPayable(key, now) })
        const identity = (transfer: { transactionHash: string; outputIndex: number }) => `${transfer.transactionHash}:${transfer.outputIndex}`
        const seen = new Set(pending.map(identity))
        const known = new Set<string>()
        let invalidated = 0
        for (const waiting of yield* repo.inMempool(network)) {
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
        for (const transfer of pending) {
          if (known.has(identity(transfer))) continue
          const entries = index.lookup(transfer.key)
          if (entries === undefined) continue
          const classified = source.classify(transfer, entries)
          // A deposit that matches no option is recorded once it is mined, with its block.
          if (classified._tag !== "Evidence") continue
          yield* evidence.record({
            paymentOptionId: classified.option.optionId,
            transactionHash: transfer.transactionHash,
            outputIndex: transfer.outputIndex,
            amountAtomic: transfer.amountAtomic,
            confirmations: 0,
            observedAt: readAt,
            destinationAddress: transfer.toAddress,
            inMempool: true
          }).pipe(
            Effect.andThen(applied("evidence")),
            Effect.catchTag("EvidenceRejected", (error) => rejected(error, transfer.transactionHash))
          )
        }
        return { readAt, invalidated, seen: pending.length }
      })

    const startingCursor = (head: BlockHeader) =>
      Effect.gen(function*() {
        const height = head.height > options.initialLookback ? head.height - options.initialLookback : 0n
        const block = height === head.height ? head : yield* blockOrFail(height)
        yield* Effect.logInfo("Chain watcher starts").pipe(Effect.annotateLogs({ network, height: height.toString() }))
        return { height: block.height, hash: block.hash, chainTime: block.time }
      })

    let publishedEndpoints: string | undefined
    /** The endpoints' states, written only when they changed (for the dashboard and /metrics). */
    const publishEndpoints = source.endpoints === undefined ? Effect.void : Effect.gen(function*() {
      const report = JSON.stringify(yield* source.endpoints!)
      if (report === publishedEndpoints) return
      yield* repo.saveEndpoints(network, report)
      publishedEndpoints = report
    })

    const poll = Effect.gen(function*() {
      const head = yield* source.head
      let cursor = (yield* repo.cursor(network)) ?? (yield* startingCursor(head))
      let invalidated = 0
      let refundsReverted = 0
      if (head.height < cursor.height) {
        // A lagging node behind a load balancer: wait for it rather than rewind without a hash check.
        yield* Effect.logWarning("The node's head is behind the cursor; waiting").pipe(
          Effect.annotateLogs({ network, head: head.height.toString(), cursor: cursor.height.toString() })
        )
        return {
          network,
          headHeight: head.height,
          processedHeight: cursor.height,
          evidence: 0,
          unmatched: 0,
          invalidated,
          confirmationsUpdated: 0,
          mempoolSeen: 0,
          refundsSeen: 0,
          refundsReverted: 0
        }
      }
      const atCursor = cursor.height === head.height ? head : yield* source.block(cursor.height)
      if (atCursor?.hash !== cursor.hash) {
        const rewound = yield* rewind(cursor.height)
        cursor = rewound.cursor
        invalidated += rewound.invalidated
        refundsReverted += rewound.refundsReverted
      }
      let awaiting = yield* repo.awaitingConfirmation(network)
      let awaitingRefunds = yield* refunds.awaiting
      const orphanedAt = yield* firstOrphanedEvidence([...awaiting, ...awaitingRefunds], cursor)
      if (orphanedAt !== undefined) {
        const rewound = yield* rewind(orphanedAt)
        cursor = rewound.cursor
        invalidated += rewound.invalidated
        refundsReverted += rewound.refundsReverted
        awaiting = yield* repo.awaitingConfirmation(network)
        awaitingRefunds = yield* refunds.awaiting
      }
      const scanned = yield* scan(cursor, head, awaitingRefunds)
      const confirmationsUpdated = (yield* confirm(awaiting, head)) + (yield* refunds.confirm(awaitingRefunds, head))
      let cursorSaved = scanned.cursor
      let mempoolSeen = 0
      if (source.mempool !== undefined && scanned.cursor.height === head.height) {
        const watched = yield* watchMempool(source.mempool)
        invalidated += watched.invalidated
        mempoolSeen = watched.seen
        // Blocks come minutes apart, the mempool is read now: what is processed reaches the read.
        if (watched.readAt > cursorSaved.chainTime) cursorSaved = { ...cursorSaved, chainTime: watched.readAt }
      }
      // After the scan and the mempool: evidence mined again, or back in the mempool, is revived by now.
      yield* settleReorgs(network, scanned.cursor.height, rejected)
      yield* repo.saveProgress(network, { cursor: cursorSaved, headHeight: head.height, headTime: head.time })
      if (scanned.cursor.height > options.keepDepth) yield* repo.forgetBlocksBelow(network, scanned.cursor.height - options.keepDepth)
      return {
        network,
        headHeight: head.height,
        processedHeight: scanned.cursor.height,
        evidence: scanned.evidence,
        unmatched: scanned.unmatched,
        invalidated,
        confirmationsUpdated,
        mempoolSeen,
        refundsSeen: scanned.refundsSeen,
        refundsReverted
      } satisfies PollReport
    }).pipe(Effect.ensuring(publishEndpoints), Effect.withSpan("ChainWatcher.poll", { attributes: { network } }))

    const watcher: ChainWatcher = { network, poll }
    return watcher
  })
