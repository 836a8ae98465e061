/**
 * Which derivation index each EVM deposit option of one invoice gets, relative to the first index
 * reserved for its extended key. One address serves every EVM chain, so options of one invoice on
 * different networks share an index (one derivation, and a payer who picks the wrong chain still
 * pays an address the merchant holds); two options on the same network never do, because a
 * watcher attributes a transfer by network and address.
 */
export interface DepositSlotRequest {
  readonly id: string
  readonly xpub: string
  readonly network: string
}

export interface DepositSlots {
  /** Indexes to reserve per extended key. */
  readonly counts: ReadonlyMap<string, number>
  /** Offset from the key's first reserved index, per option id. */
  readonly offsets: ReadonlyMap<string, number>
}

export const depositSlots = (requests: ReadonlyArray<DepositSlotRequest>): DepositSlots => {
  const counts = new Map<string, number>()
  const offsets = new Map<string, number>()
  const perNetwork = new Map<string, number>()
  for (const request of requests) {
    const key = `${request.xpub}\u0000${request.network}`
    const offset = perNetwork.get(key) ?? 0
    perNetwork.set(key, offset + 1)
    offsets.set(request.id, offset)
    counts.set(request.xpub, Math.max(counts.get(request.xpub) ?? 0, offset + 1))
  }
  return { counts, offsets }
}
