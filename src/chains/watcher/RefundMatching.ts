import { Effect } from "effect"
import { paysRefund, RefundWatch, type RefundTransfer, type WatchedRefund } from "../../refunds/RefundWatch.ts"
import type { BlockHeader, Transfer } from "../source/ChainSource.ts"
import type { WatchScope } from "./WatchScope.ts"

/** A refund and the transfer that pays it. */
export interface RefundMatch {
  readonly refund: WatchedRefund
  readonly transfer: Transfer
}

const identity = (transfer: { readonly transactionHash: string; readonly outputIndex: number }) => `${transfer.transactionHash}:${transfer.outputIndex}`

/**
 * The first transfer (in chain order) paying each watched refund: same key and token, the exact
 * amount, from any sender. Later transfers to the same refund are not counted, and a refund already
 * `sent` (bound to its transaction) takes no other one: such a transfer goes to the next refund it
 * pays (two refunds of the same amount to the same address).
 */
export const matchRefunds = (
  transfers: ReadonlyArray<Transfer>,
  watched: ReadonlyArray<WatchedRefund>,
  sent: ReadonlyArray<RefundTransfer> = []
): ReadonlyArray<RefundMatch> => {
  if (watched.length === 0) return []
  const byKey = new Map<string, Array<WatchedRefund>>()
  for (const refund of watched) byKey.set(refund.key, [...(byKey.get(refund.key) ?? []), refund])
  const boundTo = new Map<string, string>(sent.map((known) => [known.refundId, identity(known)]))
  const matched = new Set<string>()
  const matches: Array<RefundMatch> = []
  const takes = (refund: WatchedRefund, transfer: Transfer) => {
    if (matched.has(refund.refundId)) return false
    const bound = boundTo.get(refund.refundId)
    return (bound === undefined || bound === identity(transfer)) && paysRefund(transfer, refund)
  }
  for (const transfer of transfers) {
    const refund = byKey.get(transfer.key)?.find((candidate) => takes(candidate, transfer))
    if (refund === undefined) continue
    matched.add(refund.refundId)
    matches.push({ refund, transfer })
  }
  return matches
}

/**
 * The transfers that may count as payments: those not paying a refund, matched in this scan or
 * already bound to a sent one. A transfer that completes a refund is never also a payment (#44),
 * even when the refund address is an address the watchers take payments at.
 */
export const notRefundTransfers = (
  transfers: ReadonlyArray<Transfer>,
  refunded: ReadonlyArray<RefundMatch>,
  sent: ReadonlyArray<RefundTransfer> = []
): ReadonlyArray<Transfer> => {
  const refundTransfers = new Set([...refunded.map((match) => identity(match.transfer)), ...sent.map(identity)])
  return transfers.filter((transfer) => !refundTransfers.has(identity(transfer)))
}

/** Confirmations of a block at `height` when the chain's head is `head`. */
const confirmationsAt = (height: bigint, head: bigint) => Number(head - height + 1n)

/**
 * The refund side of the shared watcher loop (EVM, bitcoin): what to look for in new blocks,
 * recording what pays it, newer confirmation counts, and a reorganisation's rewind.
 */
export const makeRefundObservation = ({ network, livemode }: WatchScope) =>
  Effect.gen(function*() {
    const refunds = yield* RefundWatch
    return {
      watched: refunds.watched([network], livemode),
      awaiting: refunds.awaiting(network, livemode),
      /**
       * Records each match with its block's time and its confirmations at `head`; one that waits for
       * corroboration (`waiting`) at 0 confirmations: `sent`, never `completed` until corroborated.
       */
      observe: (matches: ReadonlyArray<RefundMatch>, blocks: ReadonlyMap<bigint, BlockHeader>, head: BlockHeader, waiting: (transfer: Transfer) => boolean) =>
        Effect.forEach(matches, ({ refund, transfer }) =>
          refunds.observe({
            refundId: refund.refundId,
            transactionHash: transfer.transactionHash,
            outputIndex: transfer.outputIndex,
            blockHeight: transfer.blockHeight,
            blockHash: transfer.blockHash,
            confirmations: waiting(transfer) ? 0 : confirmationsAt(transfer.blockHeight, head.height),
            observedAt: blocks.get(transfer.blockHeight)!.time
          }), { discard: true }),
      /** Re-reports refunds still short of their confirmations with the count at `head`; returns how many. */
      confirm: (awaiting: ReadonlyArray<RefundTransfer>, head: BlockHeader) =>
        Effect.gen(function*() {
          let updated = 0
          for (const known of awaiting) {
            const confirmations = confirmationsAt(known.blockHeight, head.height)
            if (confirmations <= known.confirmations) continue
            yield* refunds.observe({ ...known, confirmations })
            updated++
          }
          return updated
        }),
      /** Refunds mined above the fork go back to `requested`; the rescan from the fork sees them again if they are still mined. */
      invalidateAbove: (height: bigint) => refunds.invalidateAbove(network, height, livemode),
      /** A refund's transfer a majority of the endpoints denies: the refunds bound to it go back to `requested`. */
      invalidateTransaction: (transactionHash: string) => refunds.invalidateTransaction(network, transactionHash, livemode)
    }
  })
