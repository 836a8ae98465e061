/** What the position needs of a log: its transaction and its block-level index. */
export interface PositionedLog {
  readonly transactionHash: string
  readonly logIndex: number
}

/**
 * The evidence output index of EVM logs: each log's position within its transaction among the logs
 * the source reads (the ERC-20 `Transfer` events of the configured token contracts), in `logIndex`
 * order. Unlike the block-level `logIndex`, it does not change when a reorganisation mines the same
 * transaction in another block, and it needs no request beyond the `eth_getLogs` that found the logs:
 * a block range's result holds every log of the filter from each of its transactions. It is the
 * true position among the transaction's logs only when all of them match the filter; it stays the
 * same as long as the configured token contracts do (see docs/decisions.md). Returns one position
 * per log, in the order given.
 */
export const positionsInTransaction = (logs: ReadonlyArray<PositionedLog>): ReadonlyArray<number> => {
  const byTransaction = new Map<string, Array<number>>()
  for (const log of logs) {
    const key = log.transactionHash.toLowerCase()
    const indexes = byTransaction.get(key)
    if (indexes === undefined) byTransaction.set(key, [log.logIndex])
    else indexes.push(log.logIndex)
  }
  for (const indexes of byTransaction.values()) indexes.sort((a, b) => a - b)
  return logs.map((log) => byTransaction.get(log.transactionHash.toLowerCase())!.indexOf(log.logIndex))
}
