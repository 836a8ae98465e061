import fc from "fast-check"
import { describe, expect, it } from "vitest"
import { positionsInTransaction } from "../../src/chains/evm/LogPosition.ts"

interface Log {
  readonly transactionHash: string
  readonly logIndex: number
  /** Which of the transaction's own logs this is. */
  readonly own: number
}

/** A block's logs as eth_getLogs returns them: transactions in order, each one's logs contiguous, logIndex counting up. */
const blockOf = (transactions: ReadonlyArray<{ readonly hash: string; readonly logs: number }>, firstLogIndex: number): Array<Log> => {
  const logs: Array<Log> = []
  let logIndex = firstLogIndex
  for (const transaction of transactions) {
    for (let own = 0; own < transaction.logs; own++) logs.push({ transactionHash: transaction.hash, logIndex: logIndex++, own })
  }
  return logs
}

const others = (prefix: string) => fc.array(fc.integer({ min: 1, max: 4 }), { maxLength: 6 }).map((counts) => counts.map((logs, at) => ({ hash: `0x${prefix}${at}`, logs })))

const positionsOf = (logs: ReadonlyArray<Log>, hash: string) => {
  const positions = positionsInTransaction(logs)
  return logs.flatMap((log, at) => (log.transactionHash === hash ? [{ own: log.own, position: positions[at] }] : []))
}

describe("the EVM evidence output index", () => {
  it("is the same when the transaction is mined again in another block, behind other transactions, with other block-level log indexes", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 5 }),
        others("a"),
        others("b"),
        others("c"),
        others("d"),
        fc.integer({ min: 0, max: 50 }),
        fc.integer({ min: 0, max: 50 }),
        // Logs the source's filter does not return (another contract's): the same ones of the transaction in both blocks.
        fc.array(fc.boolean(), { minLength: 5, maxLength: 5 }),
        (count, beforeFirst, afterFirst, beforeSecond, afterSecond, firstStart, secondStart, kept) => {
          const ours = { hash: "0xfeed", logs: count }
          const filter = (logs: Array<Log>) => logs.filter((log) => log.transactionHash !== ours.hash || kept[log.own] !== false)
          const first = filter(blockOf([...beforeFirst, ours, ...afterFirst], firstStart))
          const second = filter(blockOf([...beforeSecond, ours, ...afterSecond], secondStart))
          const inFirst = positionsOf(first, ours.hash)
          expect(positionsOf(second, ours.hash)).toEqual(inFirst)
          // Distinct positions 0, 1, ... in the order of the logs: one identity per log of the transaction.
          expect(inFirst.map((entry) => entry.position)).toEqual(inFirst.map((_, at) => at))
        }
      )
    )
  })

  it("does not depend on the order in which the logs are given", () => {
    fc.assert(
      fc.property(others("e"), fc.integer({ min: 0, max: 99 }), (transactions, seed) => {
        const logs = blockOf(transactions, 7)
        const shuffled = [...logs].sort((a, b) => ((a.logIndex * 31 + seed) % 17) - ((b.logIndex * 31 + seed) % 17))
        const positions = positionsInTransaction(shuffled)
        for (const [at, log] of shuffled.entries()) expect(positions[at]).toBe(log.own)
      })
    )
  })
})
