import { Clock, Effect, Semaphore } from "effect"
import type { Statement } from "effect/sql"
import { type OptionRow, type WatchedOption, WatchedOptionsRepo } from "./WatchedOptionsRepo.ts"

export { WatchedOption } from "./WatchedOptionsRepo.ts"

export interface WatchIndex {
  /** Loads the options created since the last refresh (a query over new rows only). */
  readonly refresh: Effect.Effect<void>
  readonly lookup: (key: string) => ReadonlyArray<WatchedOption> | undefined
  /** Up to `limit` keys with an option still payable at `now` (what a mempool watch looks at). */
  readonly payableKeys: (now: number, limit: number) => ReadonlyArray<string>
  /** Payable up to and including `payableUntilAt` (the spec's "at or before"). */
  readonly isPayable: (key: string, now: number) => boolean
  readonly size: () => number
  /** The keys watched now (a watcher that reads per key, such as Solana's per token account). */
  readonly keys: () => ReadonlyArray<string>
}

export interface WatchIndexOptions {
  readonly networks: ReadonlyArray<string>
  /** The match key (one of WatchedOptionsRepo's `keys`); options where it is null are not watched. */
  readonly key: Statement.Fragment
  /**
   * Live watchers (`true`) watch only live invoices, testnet watchers (`false`) only test invoices:
   * a real transfer to a test invoice's address never credits it, nor a testnet one a live invoice.
   */
  readonly livemode: boolean
  /** Options of invoices whose payable window ended longer ago than this stop being watched. */
  readonly retentionMillis: number
}

/** Rows older than this many sequence numbers at start-up are loaded by time, not by sequence. */
const STARTUP_OVERLAP = 1_000n
/** A sequence number still missing after this long was a rolled-back insert, not an uncommitted one. */
const GAP_TIMEOUT_MILLIS = 60_000
const PRUNE_EVERY_MILLIS = 10 * 60_000
const PAGE = 5_000

/**
 * The watched set as an in-memory index, so matching a block costs a map lookup per transfer
 * whatever the number of open invoices. Loaded once, then refreshed incrementally by the
 * options' insertion sequence (`watch_seq`). Sequence numbers can commit out of order, so the
 * index advances its high-water mark only over a contiguous run of seen numbers, and re-reads
 * past a gap until the gap is filled or times out (a rolled-back insert leaves a permanent gap).
 */
export const makeWatchIndex = (options: WatchIndexOptions) =>
  Effect.gen(function*() {
    const repo = yield* WatchedOptionsRepo
    const watched = repo.scope(options.networks, options.key, options.livemode)
    const lock = yield* Semaphore.make(1)
    const byKey = new Map<string, Array<WatchedOption>>()
    const seen = new Set<bigint>()
    const gapSince = new Map<bigint, number>()
    let contiguous: bigint | undefined
    let lastPrune = 0

    const add = (row: OptionRow) => {
      if (row.key === null) return
      const list = byKey.get(row.key)
      const entry: WatchedOption = { ...row, key: row.key }
      if (list === undefined) byKey.set(row.key, [entry])
      else if (!list.some((known) => known.optionId === row.optionId)) list.push(entry)
    }

    const prune = (now: number) => {
      lastPrune = now
      for (const [key, list] of byKey) {
        const kept = list.filter((entry) => entry.payableUntilAt.getTime() + options.retentionMillis > now)
        if (kept.length === 0) byKey.delete(key)
        else if (kept.length !== list.length) byKey.set(key, kept)
      }
    }

    const initialLoad = Effect.gen(function*() {
      const now = yield* Clock.currentTimeMillis
      const max = yield* repo.maxSeq
      const upTo = max - STARTUP_OVERLAP
      let after = 0n
      while (upTo > 0n) {
        const rows = yield* watched.payableBetween(after, upTo, new Date(now - options.retentionMillis), PAGE)
        rows.forEach(add)
        if (rows.length < PAGE) break
        after = rows[rows.length - 1].watchSeq
      }
      contiguous = upTo > 0n ? upTo : 0n
      lastPrune = now
    })

    const advance = (now: number) => {
      let mark = contiguous ?? 0n
      while (seen.size > 0) {
        const next = mark + 1n
        if (seen.delete(next)) {
          mark = next
          gapSince.delete(next)
          continue
        }
        const since = gapSince.get(next)
        if (since === undefined) gapSince.set(next, now)
        if (since === undefined || now - since < GAP_TIMEOUT_MILLIS) break
        gapSince.delete(next)
        mark = next
      }
      contiguous = mark
    }

    const refreshUnlocked = Effect.gen(function*() {
      if (contiguous === undefined) yield* initialLoad
      while (true) {
        const after = contiguous ?? 0n
        const rows = yield* watched.after(after, PAGE)
        for (const row of rows) {
          add(row)
          seen.add(row.watchSeq)
        }
        const now = yield* Clock.currentTimeMillis
        advance(now)
        if (now - lastPrune > PRUNE_EVERY_MILLIS) prune(now)
        if (rows.length < PAGE || contiguous === after) return
      }
    })

    const index: WatchIndex = {
      refresh: lock.withPermits(1)(refreshUnlocked).pipe(Effect.withSpan("WatchIndex.refresh")),
      lookup: (key) => byKey.get(key),
      payableKeys: (now, limit) => {
        const keys: Array<string> = []
        for (const [key, list] of byKey) {
          if (keys.length >= limit) break
          if (list.some((entry) => entry.payableUntilAt.getTime() >= now)) keys.push(key)
        }
        return keys
      },
      isPayable: (key, now) => byKey.get(key)?.some((entry) => entry.payableUntilAt.getTime() >= now) ?? false,
      size: () => {
        let total = 0
        for (const list of byKey.values()) total += list.length
        return total
      },
      keys: () => [...byKey.keys()]
    }
    return index
  })
