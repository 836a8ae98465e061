import { PublicKey } from "@solana/web3.js"
import { Effect } from "effect"
import { tokenAccountOf } from "./SolanaCorroboration.ts"
import { missedSignatures, recordMissed } from "./SolanaDepthRescan.ts"
import type { SolanaWatcherContext, Target } from "./SolanaWatcherContext.ts"

type Targets = ReadonlyArray<Omit<Target, "tokenAccount">>

/** The watched merchant token accounts (payments), each with its account. */
const paymentAccounts = (targets: Targets) =>
  targets.flatMap((target) => {
    const tokenAccount = target.payments ? tokenAccountOf(target.recipient, target.mint) : undefined
    return tokenAccount === undefined ? [] : [{ target: { ...target, tokenAccount }, account: new PublicKey(tokenAccount) }]
  })

/**
 * The accounts read while an endpoint was quarantined, read again from it once it is back (as
 * MultiSource's `rereadReturning` does for blocks). At each poll's start, an endpoint newly seen
 * `disagreeing` is noted with the account cursors of the poll before (its marking came from that
 * poll or a later one), so nothing read while it was out is skipped. Once it is usable again, each
 * watched merchant token account's signatures are read from it (one getSignaturesForAddress page,
 * the newest 1,000) back to that slot, and the payments not recorded are corroborated and recorded
 * as the re-read at depth does. An account stopped below a refused, disputed or unreadable one is
 * read again from there at the next poll. Positions are in memory: after a restart, none is kept.
 */
export const makeSolanaQuarantineReread = (context: SolanaWatcherContext) => {
  /** Per endpoint out: per token account, the slot above which it was read while the endpoint was (absent: every signature of the page). */
  const quarantined = new Map<number, Map<string, number>>()
  let previous = new Map<string, number>()

  /** Before the poll's scan: endpoints newly out noted with the cursors of the poll before, and this poll's cursors kept. */
  const note = (targets: Targets) =>
    Effect.gen(function*() {
      if (!context.client.several) return
      const standing = yield* context.client.standing
      standing.forEach((state, index) => {
        if (state === "out" && !quarantined.has(index)) quarantined.set(index, new Map(previous))
      })
      const cursors = new Map<string, number>()
      for (const { target } of paymentAccounts(targets)) {
        const cursor = yield* context.repo.cursor(target.tokenAccount)
        // The cursor's own slot may hold later signatures: read from the slot below it.
        if (cursor !== undefined) cursors.set(target.tokenAccount, Number(cursor.slot) - 1)
      }
      previous = cursors
    })

  /** After the poll's scan: the accounts read again from each endpoint back from quarantine; the payments found. */
  const readReturning = (targets: Targets, headSlot: number) =>
    Effect.gen(function*() {
      if (quarantined.size === 0) return 0
      const standing = yield* context.client.standing
      let found = 0
      for (const [index, from] of quarantined) {
        if (standing[index] !== "usable") continue
        let complete = true
        for (const { target, account } of paymentAccounts(targets)) {
          const start = from.get(target.tokenAccount) ?? -1
          if (start >= headSlot) continue
          const missed = yield* missedSignatures(context, index, account, start, headSlot)
          if (missed === undefined) {
            complete = false
            continue
          }
          const read = yield* recordMissed(context, index, target, missed, headSlot, headSlot)
          found += read.found
          if (read.end < headSlot) {
            complete = false
            from.set(target.tokenAccount, Math.max(start, read.end))
          } else from.set(target.tokenAccount, headSlot)
        }
        if (complete) quarantined.delete(index)
      }
      return found
    })

  return { note, readReturning }
}
