import { Effect } from "effect"
import type { ChainEvidence, Cursor, Uncorroborated } from "./ChainRepo.ts"
import type { Verdict } from "../source/Corroboration.ts"
import { type BlockHeader, ChainRpcError, type Classified, type Scanned, type Transfer } from "../source/ChainSource.ts"
import { matchRefunds, notRefundTransfers, type RefundMatch } from "./RefundMatching.ts"
import type { RefundTransfer } from "../../refunds/RefundWatch.ts"
import type { WatcherContext } from "./WatcherContext.ts"

type Unmatched = Extract<Classified, { _tag: "Unmatched" }>

const recordUnmatched = ({ network, repo, applied }: WatcherContext, transfer: Transfer, classified: Unmatched, block: BlockHeader) =>
  Effect.gen(function*() {
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
  })

/**
 * What one mined transfer to a watched key is: evidence for its option (through PaymentEvidence),
 * or an unmatched deposit. `waiting`: no majority of the other endpoints corroborated it yet, so
 * it is marked as waiting before it is recorded at 0 confirmations (docs/chains.md).
 */
const observe = (context: WatcherContext, transfer: Transfer, block: BlockHeader, head: BlockHeader, waiting: Uncorroborated | undefined) =>
  Effect.gen(function*() {
    const entries = context.index.lookup(transfer.key)
    if (entries === undefined) return "ignored" as const
    const classified = context.source.classify(transfer, entries)
    if (classified._tag === "Unmatched") {
      yield* recordUnmatched(context, transfer, classified, block)
      return "unmatched" as const
    }
    if (waiting !== undefined) yield* context.repo.markUncorroborated(context.scope, waiting)
    yield* context.evidence.record({
      paymentOptionId: classified.option.optionId,
      transactionHash: transfer.transactionHash,
      outputIndex: transfer.outputIndex,
      amountAtomic: transfer.amountAtomic,
      confirmations: waiting === undefined ? Number(head.height - transfer.blockHeight + 1n) : 0,
      observedAt: block.time,
      destinationAddress: transfer.toAddress,
      payerAddress: transfer.fromAddress,
      blockHeight: transfer.blockHeight,
      blockHash: transfer.blockHash
    }).pipe(
      Effect.andThen(context.applied("evidence")),
      Effect.catchTag("EvidenceRejected", (error) => context.rejected(error, transfer.transactionHash))
    )
    if (waiting === undefined) yield* context.repo.clearUncorroborated(context.scope, transfer.transactionHash, transfer.outputIndex)
    return "evidence" as const
  })

/**
 * The corroboration step: with several endpoints, each transfer the watcher would take (payments
 * and refunds' transfers alike) is asked of the others (Corroboration.ts); with one, each is taken
 * as it is. Returns the lowest height of a transfer refused or disputed, where this scan must stop:
 * the blocks from there are read again at the next poll, so a dispute is asked again and a
 * transfer an outvoted endpoint left out is still found; and `waiting`, what no majority
 * corroborated yet (unanswered or disputed): recorded at 0 confirmations and asked again at every
 * poll (WatcherRecheck). An unanswered one does not stop the scan.
 */
const corroborated = (scanned: Scanned, payments: ReadonlyArray<Transfer>, refunds: ReadonlyArray<Transfer>) =>
  Effect.gen(function*() {
    const taken = [...payments, ...refunds]
    const verdicts: ReadonlyArray<Verdict> = scanned.corroborate === undefined || taken.length === 0
      ? taken.map(() => "confirmed")
      : yield* scanned.corroborate(taken)
    let stop: bigint | undefined
    for (const [at, transfer] of taken.entries()) {
      const verdict = verdicts[at]
      if (verdict === "confirmed" || verdict === "unanswered") continue
      if (stop === undefined || transfer.blockHeight < stop) stop = transfer.blockHeight
    }
    const waiting = (transfer: Transfer): Uncorroborated | undefined => {
      const verdict = verdicts[taken.indexOf(transfer)]
      return verdict === "unanswered" || verdict === "disputed"
        ? { transactionHash: transfer.transactionHash, outputIndex: transfer.outputIndex, reporter: scanned.reporter ?? "", token: transfer.token,
          disputed: verdict === "disputed" }
        : undefined
    }
    return { stop, waiting }
  })

/**
 * The refunds' transfers of a scan: marked first when they wait for corroboration (then `sent` at
 * 0 confirmations, never `completed` until corroborated), their mark cleared once corroborated.
 */
const observeRefunds = (
  context: WatcherContext,
  refunded: ReadonlyArray<RefundMatch>,
  headers: ReadonlyMap<bigint, BlockHeader>,
  head: BlockHeader,
  waiting: (transfer: Transfer) => Uncorroborated | undefined
) =>
  Effect.gen(function*() {
    const { scope, repo } = context
    for (const { transfer } of refunded) {
      const mark = waiting(transfer)
      if (mark !== undefined) yield* repo.markUncorroborated(scope, mark)
    }
    yield* context.refunds.observe(refunded, headers, head, (transfer) => waiting(transfer) !== undefined)
    for (const { transfer } of refunded) {
      if (waiting(transfer) === undefined) yield* repo.clearUncorroborated(scope, transfer.transactionHash, transfer.outputIndex)
    }
  })

/** The headers of the blocks the taken transfers are in, and of `end`; fails when one changed since the scan read it. */
const headersOf = (context: WatcherContext, taken: ReadonlyArray<Transfer>, end: bigint, head: BlockHeader) =>
  Effect.gen(function*() {
    const headers = new Map<bigint, BlockHeader>()
    for (const height of new Set([...taken.map((transfer) => transfer.blockHeight), end])) {
      headers.set(height, height === head.height ? head : yield* context.blockOrFail(height))
    }
    // A log whose block is no longer the chain's at its height was read from a branch being replaced.
    for (const transfer of taken) {
      if (headers.get(transfer.blockHeight)?.hash !== transfer.blockHash) {
        return yield* new ChainRpcError({ network: context.network, message: `block ${transfer.blockHeight} changed during the poll` })
      }
    }
    return headers
  })

/** What a scan read that the watcher takes: transfers paying a watched refund, and the others to watched keys (payments). */
const takenOf = (context: WatcherContext, scanned: Scanned, watchedRefunds: Parameters<typeof matchRefunds>[1], sent: ReadonlyArray<RefundTransfer>) => {
  const refunded = matchRefunds(scanned.transfers, watchedRefunds, sent)
  const watched = notRefundTransfers(scanned.transfers, refunded, sent).filter((transfer) => context.index.lookup(transfer.key) !== undefined)
  return { watched, refunded }
}

const below = (end: bigint) => (transfer: Transfer) => transfer.blockHeight <= end

/**
 * The scan step: new blocks after the cursor, up to the head (or as far as the source covers in
 * one request, or up to a transfer not corroborated): evidence and unmatched deposits recorded,
 * refunds' transfers reported, the blocks remembered; returns the new cursor.
 */
export const scanNewBlocks = (context: WatcherContext, cursor: Cursor, head: BlockHeader, sentRefunds: ReadonlyArray<RefundTransfer>) =>
  Effect.gen(function*() {
    const counts = { evidence: 0, unmatched: 0, refundsSeen: 0 }
    if (cursor.height >= head.height) return { cursor, ...counts }
    yield* context.index.refresh
    const scanned = yield* context.source.scan(cursor.height + 1n, head.height)
    const all = takenOf(context, scanned, yield* context.refunds.watched, sentRefunds)
    const { stop, waiting } = yield* corroborated(scanned, all.watched, all.refunded.map((match) => match.transfer))
    const end = stop === undefined ? scanned.to : stop - 1n
    // A disputed transfer is detected (0 confirmations; a refund `sent`) though the scan stops below it.
    const detected = (transfer: Transfer) => below(end)(transfer) || waiting(transfer)?.disputed === true
    const watched = all.watched.filter(detected)
    const refunded = all.refunded.filter((match: RefundMatch) => detected(match.transfer))
    const headers = yield* headersOf(context, [...watched, ...refunded.map((match) => match.transfer)], end, head)
    for (const transfer of watched) {
      const outcome = yield* observe(context, transfer, headers.get(transfer.blockHeight)!, head, waiting(transfer))
      if (outcome !== "ignored") counts[outcome]++
    }
    yield* observeRefunds(context, refunded, headers, head, waiting)
    counts.refundsSeen = refunded.length
    if (end <= cursor.height) return { cursor, ...counts }
    const last = headers.get(end)!
    const remembered = [...headers.values()].filter((block) => block.height <= end)
    yield* context.repo.rememberBlocks(context.scope, remembered.map((block) => ({ height: block.height, hash: block.hash })))
    return { cursor: { height: last.height, hash: last.hash, chainTime: last.time }, ...counts }
  })

/**
 * The re-read at depth (issue #52 item 2): with several endpoints, each range is read once more
 * from another endpoint than reads go to once it is `depth` blocks deep (one scan per range, not a
 * lookup per transfer). A payment the first reading left out is corroborated like any other (the
 * endpoint that omitted it is asked too: a majority outvotes it) and recorded; the re-read stops
 * below a refused or disputed one and asks again at the next poll. The position is kept in memory:
 * after a restart it starts again from the cursor.
 */
export const makeDepthRescan = (context: WatcherContext, depth: bigint) => {
  let rescanned: bigint | undefined
  return (cursor: Cursor, head: BlockHeader) =>
    Effect.gen(function*() {
      const rescan = context.source.rescan
      if (rescan === undefined) return 0
      if (rescanned === undefined || rescanned > cursor.height) rescanned = cursor.height
      const to = head.height - depth + 1n < cursor.height ? head.height - depth + 1n : cursor.height
      if (to <= rescanned) return 0
      const scanned = yield* rescan(rescanned + 1n, to)
      if (scanned === undefined) return 0
      const { end, found } = yield* recordMissed(context, scanned, head, rescanned)
      if (end > rescanned) rescanned = end
      return found
    })
}

/**
 * What a second reading found that is not recorded yet: corroborated like any other transfer (the
 * endpoint that omitted it is asked too) and recorded. Returns how many, and the height up to which
 * the reading is settled (below a refused or disputed one; at least `floor`).
 */
const recordMissed = (context: WatcherContext, scanned: Scanned, head: BlockHeader, floor: bigint) =>
  Effect.gen(function*() {
    const known = yield* context.repo.knownTransfers(context.scope, [...new Set(scanned.transfers.map((transfer) => transfer.transactionHash))])
    // A refund's transfer is never a payment: those still watched are left to the scan, known ones are skipped.
    const missed = takenOf(context, scanned, yield* context.refunds.watched, []).watched.filter((transfer) => !known.has(`${transfer.transactionHash}:${transfer.outputIndex}`))
    const { stop, waiting } = yield* corroborated(scanned, missed, [])
    const end = stop === undefined ? scanned.to : stop - 1n
    const taken = missed.filter((transfer) => below(end)(transfer) || waiting(transfer)?.disputed === true)
    const headers = yield* headersOf(context, taken, end > floor ? end : floor, head)
    for (const transfer of taken) {
      yield* Effect.logWarning("A payment the first reading left out was found by another endpoint").pipe(
        Effect.annotateLogs({ network: context.network, transactionHash: transfer.transactionHash, foundBy: scanned.reporter ?? "" })
      )
      yield* observe(context, transfer, headers.get(transfer.blockHeight)!, head, waiting(transfer))
    }
    return { end, found: taken.length }
  })

/**
 * The re-read when a quarantine ends (issue #52 item 1): the blocks scanned while an endpoint was
 * `disagreeing`, up to the cursor, read from it once it is usable again (MultiSource), so a real
 * payment the endpoints read meanwhile left out is still found, through corroboration.
 */
export const rereadReturning = (context: WatcherContext, cursor: Cursor, head: BlockHeader) =>
  Effect.gen(function*() {
    const reread = context.source.rereadReturning
    if (reread === undefined) return 0
    const scanned = yield* reread(cursor.height)
    if (scanned === undefined) return 0
    return (yield* recordMissed(context, scanned, head, scanned.to)).found
  })

/** The confirmations step: evidence below its required confirmations re-reported with the count at this head; what waits for corroboration stays at 0. */
export const confirmEvidence = (context: WatcherContext, awaiting: ReadonlyArray<ChainEvidence>, head: BlockHeader, waiting: ReadonlySet<string>) =>
  Effect.gen(function*() {
    let updated = 0
    for (const known of awaiting) {
      const confirmations = Number(head.height - known.blockHeight + 1n)
      if (confirmations <= known.confirmations || waiting.has(`${known.transactionHash}:${known.outputIndex}`)) continue
      yield* context.evidence.record({ ...known, confirmations }).pipe(
        Effect.catchTag("EvidenceRejected", (error) => context.rejected(error, known.transactionHash))
      )
      updated++
    }
    return updated
  })
