import { Clock, Effect } from "effect"
import { type BlockHeader, type ChainSource, type MempoolSource } from "./ChainSource.ts"
import { answerFor, type Corroborate, type ReportedTransfer } from "./Corroboration.ts"
import { type EndpointPool, makeEndpointPool } from "./EndpointPool.ts"
import { type EndpointState, isRefused, isUsable, readOrder, type Tally, tally, voters, withTally } from "./EndpointSelection.ts"

export interface MultiSourceOptions {
  readonly network: string
  /** In order of preference: the first listed is used whenever it is usable. */
  readonly endpoints: ReadonlyArray<{ readonly url: string; readonly source: ChainSource }>
  /** Blocks an endpoint's head may be behind the highest before it is not used. */
  readonly maxLag: bigint
  readonly quarantineMs?: number | undefined
}

/**
 * One network's chain read through several endpoints of the same family (EndpointSelection has
 * the rules). Each poll asks every endpoint not backing off for its head (one request each, at
 * once); reads go to the first usable endpoint and fail over to the next on an error, a time-out
 * or HTTP 429 (which keeps the endpoint alone for its Retry-After). Before new blocks are scanned,
 * every voting endpoint is asked the block hash at the last height to scan (one request each per
 * scan): without a majority there, the heights below are searched for the highest that has one,
 * and the scan stops there. With a single endpoint, none of this costs a request.
 */
export const makeMultiSource = (options: MultiSourceOptions): ChainSource => {
  const { network, maxLag } = options
  const sources = options.endpoints.map((endpoint) => endpoint.source)
  const single = sources.length === 1
  // Reads go only to endpoints the last head round cleared: the watcher polls heads first.
  const pool = makeEndpointPool({ network, endpoints: options.endpoints.map(({ url, source }) => ({ url, client: source })), maxLag, order: readOrder,
    quarantineMs: options.quarantineMs })
  const { run, askAll } = pool
  let disagreement: bigint | undefined
  /** The head last handed to the watcher, which uses it as the block at its height. */
  let lastHead: BlockHeader | undefined

  const head = Effect.map(pool.head((source) => source.head, (header) => header.height), (header) => (lastHead = header))

  const vote = (height: bigint) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const answers = yield* askAll(voters(pool.states(), height, now, maxLag), (source) => hashAt(source, height))
      return tally(answers.map(({ index, value }) => ({ index, hash: value })))
    })

  /** The highest height in `from - 1`..`to` up to which a majority agrees (the cursor, `from - 1`, is taken as agreed). */
  const agreedUpTo = (from: bigint, to: bigint) =>
    Effect.gen(function*() {
      const atEnd = yield* vote(to)
      if (atEnd.agreed !== undefined) {
        pool.update((states) => withTally(states, to, atEnd))
        disagreement = undefined
        // The head came from an endpoint now outvoted there: the next poll takes it from the majority.
        return lastHead?.height === to && lastHead.hash !== atEnd.agreed ? to - 1n : to
      }
      // Forks share a prefix: search for where agreement ends.
      let agreed = from - 1n
      let disputed = to
      let disputedTally: Tally = atEnd
      while (disputed - agreed > 1n) {
        const middle = agreed + (disputed - agreed) / 2n
        const atMiddle = yield* vote(middle)
        if (atMiddle.agreed !== undefined) {
          agreed = middle
        } else {
          disputed = middle
          disputedTally = atMiddle
        }
      }
      pool.update((states) => withTally(states, disputed, disputedTally))
      // Nobody answering is not a disagreement: the next poll asks again.
      disagreement = disputedTally.dissenters.length > 1 ? disputed : undefined
      if (disagreement !== undefined) {
        yield* Effect.logWarning("Chain endpoints disagree about a block hash with no majority: not advancing past it").pipe(
          Effect.annotateLogs({ network, height: disputed.toString() })
        )
      }
      return agreed
    })

  /** Each transfer looked up on the endpoints other than `reporter` (one transaction lookup each, until a majority is settled). */
  const corroborateFrom = (reporter: number): Corroborate => (transfers) =>
    Effect.forEach(transfers, (transfer: ReportedTransfer) => pool.corroborate(reporter, transfer.transactionHash, askAbout(transfer)))

  /** A transfer recorded earlier without corroboration, asked again of every endpoint, its reporter included. */
  const recheck = (transfer: ReportedTransfer, reporter: string) => pool.corroborate(pool.indexOf(reporter), transfer.transactionHash, askAbout(transfer), { askReporter: true })

  const { noteQuarantines, rereadReturning } = makeQuarantineReread(pool, maxLag, corroborateFrom)

  const scan = (from: bigint, to: bigint) =>
    Effect.gen(function*() {
      if (single) return yield* run((source) => source.scan(from, to))
      noteQuarantines(from, yield* Clock.currentTimeMillis)
      const end = yield* agreedUpTo(from, to)
      if (end < from) return { to: from - 1n, transfers: [] }
      const { index, value } = yield* pool.runAt((source) => source.scan(from, end))
      return { ...value, corroborate: corroborateFrom(index), reporter: pool.labelAt(index) }
    })

  /** The range read again from an endpoint other than the one reads go to (undefined when none other is usable). */
  const rescan = (from: bigint, to: bigint) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const other = readOrder(pool.states(), now, maxLag).find((index) => index !== pool.inUse())
      if (other === undefined) return undefined
      const [answer] = yield* askAll([other], (source) => source.scan(from, to))
      return answer === undefined ? undefined : { ...answer.value, corroborate: corroborateFrom(other), reporter: pool.labelAt(other) }
    })

  const first = sources[0]
  const mempool: MempoolSource | undefined = first.mempool === undefined ? undefined : {
    pending: (keys) =>
      single ? run((source) => source.mempool!.pending(keys)) : Effect.map(
        pool.runAt((source) => source.mempool!.pending(keys)),
        ({ index, value }) => ({ transfers: value.transfers, corroborate: corroborateFrom(index), reporter: pool.labelAt(index) })
      ),
    place: (transactionHash) => run((source) => source.mempool!.place(transactionHash))
  }

  return {
    network,
    head,
    block: (height) => run((source) => source.block(height)),
    scan,
    classify: first.classify,
    ...(mempool === undefined ? {} : { mempool }),
    blockHash: (height) => run((source) => hashAt(source, height)),
    ...(single ? {} : { recheck, rescan, rereadReturning }),
    endpoints: Effect.sync(() => pool.report(disagreement))
  }
}

/** A block hash from a source: its own lookup if it has one, else the block's. */
const hashAt = (source: ChainSource, height: bigint) => source.blockHash !== undefined ? source.blockHash(height) : Effect.map(source.block(height), (block) => block?.hash)

/** The question a witness is asked about a reported transfer: does it see it too? */
const askAbout = (transfer: ReportedTransfer) => (source: ChainSource, state: EndpointState) =>
  source.transfersOf === undefined
    ? Effect.succeed("unknown" as const)
    : Effect.map(source.transfersOf(transfer.transactionHash), (seen) => answerFor(transfer, seen, state.head))

/** The endpoints quarantined while blocks were scanned, and the blocks each reads again once it is back. */
const makeQuarantineReread = (pool: EndpointPool<ChainSource>, maxLag: bigint, corroborateFrom: (reporter: number) => Corroborate) => {
  /**
   * Endpoints quarantined (`disagreeing`), each with the height from which blocks were scanned
   * while it was: the start of the scan before the one that saw it marked (its marking came from
   * that scan's corroboration or a later one), so nothing read while it was out is skipped.
   */
  const quarantined = new Map<number, bigint>()
  let previousFrom: bigint | undefined
  const noteQuarantines = (from: bigint, now: number) => {
    pool.states().forEach((state, index) => {
      if ((isRefused(state, now) || state.disagreesAt !== undefined) && !quarantined.has(index)) quarantined.set(index, previousFrom ?? from)
    })
    previousFrom = from
  }

  /** An endpoint back from quarantine: blocks from where it went out up to `to` read from it (undefined: none is back). */
  const rereadReturning = (to: bigint) =>
    Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const back = [...quarantined].find(([index]) => isUsable(pool.states(), index, now, maxLag))
      if (back === undefined) return undefined
      const [index, from] = back
      if (from > to) return undefined
      const [answer] = yield* pool.askAll([index], (source) => source.scan(from, to))
      if (answer === undefined) return undefined
      if (answer.value.to >= to) quarantined.delete(index)
      else quarantined.set(index, answer.value.to + 1n)
      return { ...answer.value, corroborate: corroborateFrom(index), reporter: pool.labelAt(index) }
    })

  return { noteQuarantines, rereadReturning }
}
