import { describe, expect, it } from "vitest"
import type { Transfer } from "../../src/chains/source/ChainSource.ts"
import { matchRefunds, notRefundTransfers } from "../../src/chains/watcher/RefundMatching.ts"
import type { RefundId } from "../../src/domain/Ids.ts"
import type { WatchedRefund } from "../../src/refunds/RefundWatch.ts"

const TOKEN = "0x00000000000000000000000000000000000a11ce"
const OTHER_TOKEN = "0x00000000000000000000000000000000000b0b00"

const refund = (id: string, key: string, amountAtomic: bigint): WatchedRefund => ({
  refundId: id as RefundId,
  network: "ethereum",
  key,
  token: TOKEN,
  toAddress: key,
  amountAtomic
})

let sequence = 0
const transfer = (key: string, amountAtomic: bigint, token = TOKEN): Transfer => ({
  transactionHash: `0x${(++sequence).toString(16).padStart(64, "0")}`,
  outputIndex: 0,
  blockHeight: BigInt(sequence),
  blockHash: `0x${sequence.toString(16).padStart(64, "f")}`,
  token,
  key,
  toAddress: key,
  amountAtomic
})

describe("matchRefunds", () => {
  it("matches the same key and token with exactly the refund's amount, nothing else", () => {
    const watched = [refund("a", "0xaa", 5_000_000n)]
    const exact = transfer("0xaa", 5_000_000n)
    const transfers = [
      transfer("0xaa", 4_999_999n),
      transfer("0xaa", 5_000_001n),
      transfer("0xaa", 5_000_000n, OTHER_TOKEN),
      transfer("0xbb", 5_000_000n),
      exact
    ]
    expect(matchRefunds(transfers, watched)).toEqual([{ refund: watched[0], transfer: exact }])
    expect(matchRefunds(transfers.slice(0, 4), watched)).toEqual([])
  })

  it("gives each refund the first transfer that pays it, in chain order, and a transfer to one refund only", () => {
    const watched = [refund("a", "0xaa", 7n), refund("b", "0xaa", 7n), refund("c", "0xcc", 9n)]
    const first = transfer("0xaa", 7n)
    const second = transfer("0xaa", 7n)
    const third = transfer("0xaa", 7n)
    const forC = transfer("0xcc", 9n)
    const again = transfer("0xcc", 9n)
    expect(matchRefunds([first, forC, second, third, again], watched)).toEqual([
      { refund: watched[0], transfer: first },
      { refund: watched[2], transfer: forC },
      { refund: watched[1], transfer: second }
    ])
  })

  it("gives a refund already sent only its own transaction: another transfer of its amount goes to the next refund it pays", () => {
    const watched = [refund("a", "0xaa", 7n), refund("b", "0xaa", 7n)]
    const paidA = transfer("0xaa", 7n)
    const sent = [{
      refundId: "a" as RefundId,
      transactionHash: paidA.transactionHash,
      outputIndex: 0,
      blockHeight: paidA.blockHeight,
      blockHash: paidA.blockHash,
      confirmations: 1,
      observedAt: new Date(0)
    }]
    const next = transfer("0xaa", 7n)
    expect(matchRefunds([next], watched, sent)).toEqual([{ refund: watched[1], transfer: next }])
    // Read again (a rescan), its own transaction still pays it.
    expect(matchRefunds([paidA, next], watched, sent)).toEqual([{ refund: watched[0], transfer: paidA }, { refund: watched[1], transfer: next }])
  })

  it("has nothing to match without watched refunds", () => {
    expect(matchRefunds([transfer("0xaa", 1n)], [])).toEqual([])
  })
})

describe("notRefundTransfers", () => {
  it("a transfer paying a refund is not also a payment, even to a key the watcher takes payments at", () => {
    const refundTransfer = transfer("0xdeposit", 5_000_000n)
    const payment = transfer("0xdeposit", 5_000_000n)
    const refunded = matchRefunds([refundTransfer], [refund("a", "0xdeposit", 5_000_000n)])
    expect(refunded.map((match) => match.transfer)).toEqual([refundTransfer])
    expect(notRefundTransfers([refundTransfer, payment], refunded)).toEqual([payment])
  })

  it("a transfer already bound to a sent refund is not a payment when it is read again", () => {
    const bound = transfer("0xdeposit", 5_000_000n)
    const other = transfer("0xdeposit", 1n)
    const sent = [{ refundId: "a" as RefundId, transactionHash: bound.transactionHash, outputIndex: 0, blockHeight: bound.blockHeight, blockHash: bound.blockHash, confirmations: 1,
      observedAt: new Date(0) }]
    expect(notRefundTransfers([bound, other], [], sent)).toEqual([other])
  })
})
