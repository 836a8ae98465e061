import { Clock, Effect } from "effect"
import type { WaitingEvidence } from "./ChainRepo.ts"
import type { ReportedTransfer, Verdict } from "../source/Corroboration.ts"
import type { WatcherContext } from "./WatcherContext.ts"

/** What the recheck needs of a watcher (the shared loop's context, or the Solana watcher's). */
export interface RecheckContext extends Pick<WatcherContext, "network" | "scope" | "repo" | "evidence" | "applied" | "rejected"> {
  /** Asks every endpoint about a waiting payment; undefined with a single endpoint (then it is taken as it is). */
  readonly recheck: ((row: WaitingEvidence) => Effect.Effect<Verdict>) | undefined
  /** A refund's transfer a majority denies: the refunds bound to that transaction go back to `requested`. */
  readonly invalidateRefund: (transactionHash: string) => Effect.Effect<unknown>
}

/** The shared loop's recheck: the source's, over the transfer as recorded. */
export const recheckContextOf = (context: WatcherContext): RecheckContext => {
  const recheck = context.source.recheck
  return {
    ...context,
    recheck: recheck === undefined ? undefined : (row) => recheck(asReported(row), row.reporter),
    invalidateRefund: context.refunds.invalidateTransaction
  }
}

/** How long a transfer may wait for corroboration before a warning says so, unless configured (CHECKOUT_CORROBORATION_WARNING_MS). */
export const WAITING_WARNING_MILLIS = 10 * 60_000

/** The invalidation reason of a payment a majority of the endpoints denies: as a dropped transaction. */
const DENIED = "replaced_or_dropped"

/** "10 minutes", "90 seconds": the warning's wait, as configured. */
const waitedFor = (millis: number) => millis % 60_000 === 0 ? `${millis / 60_000} minute${millis === 60_000 ? "" : "s"}` : `${Math.round(millis / 1000)} seconds`

export const identityOf = (transfer: { readonly transactionHash: string; readonly outputIndex: number }) => `${transfer.transactionHash}:${transfer.outputIndex}`

const asReported = (row: WaitingEvidence): ReportedTransfer => ({
  transactionHash: row.transactionHash,
  outputIndex: row.outputIndex,
  token: row.token,
  toAddress: row.destinationAddress ?? "",
  amountAtomic: row.amountAtomic,
  blockHeight: row.blockHeight ?? undefined,
  blockHash: row.blockHash ?? undefined
})

/**
 * The recheck step (docs/chains.md, "Corroborated transfers"): each payment recorded without
 * corroboration (another endpoint down, or a 1-1 dispute) is asked again of every endpoint, its
 * reporter included. Corroborated by a majority: it no longer waits, and the confirmations step
 * counts it from this poll on. Denied by a majority: invalidated as a dropped transaction (the
 * reporter is marked `disagreeing` by the pool). Otherwise it stays at 0 confirmations; one that
 * waits longer than 10 minutes is named in a warning, once. Returns the identities the
 * confirmations step must leave alone (still waiting, or invalidated now).
 * A disputed payment above the cursor is asked here too: the reporter's own receipt may deny it.
 */
export const makeRecheck = (context: RecheckContext, warnAfterMillis: number = WAITING_WARNING_MILLIS) => {
  const { network, scope, repo, recheck } = context
  const warned = new Set<string>()

  const settle = (row: WaitingEvidence) =>
    Effect.gen(function*() {
      if (recheck === undefined) {
        // One endpoint configured now: what it reports is taken as it is.
        yield* repo.clearUncorroborated(scope, row.transactionHash, row.outputIndex)
        return "settled" as const
      }
      const verdict = yield* recheck(row)
      if (verdict === "confirmed") {
        yield* repo.clearUncorroborated(scope, row.transactionHash, row.outputIndex)
        return "settled" as const
      }
      if (verdict === "refused" && row.refundId !== null) {
        yield* context.invalidateRefund(row.transactionHash)
        yield* repo.clearUncorroborated(scope, row.transactionHash, row.outputIndex)
        return "invalidated" as const
      }
      if (verdict === "refused") {
        yield* context.evidence.invalidate({ network, transactionHash: row.transactionHash, outputIndex: row.outputIndex, reason: DENIED }).pipe(
          Effect.andThen(context.applied("invalidated")),
          Effect.catchTag("EvidenceRejected", (error) => context.rejected(error, row.transactionHash))
        )
        yield* repo.clearUncorroborated(scope, row.transactionHash, row.outputIndex)
        return "invalidated" as const
      }
      if ((verdict === "disputed") !== row.disputed) yield* repo.markUncorroborated(scope, { ...row, disputed: verdict === "disputed" })
      return "waiting" as const
    })

  const warnIfLong = (row: WaitingEvidence, now: number) =>
    now - row.since.getTime() < warnAfterMillis || warned.has(identityOf(row)) ? Effect.void : Effect.suspend(() => {
      warned.add(identityOf(row))
      const what = row.refundId === null ? "A payment" : "A refund's transfer"
      return Effect.logWarning(`${what} has waited more than ${waitedFor(warnAfterMillis)} for another endpoint to corroborate it: it stays at 0 confirmations`).pipe(
        Effect.annotateLogs({
          network,
          transactionHash: row.transactionHash,
          reportedBy: row.reporter,
          disputed: row.disputed,
          since: row.since.toISOString(),
          ...(row.refundId === null ? {} : { refundId: row.refundId })
        })
      )
    })

  return Effect.gen(function*() {
    const still = new Set<string>()
    let invalidated = 0
    const now = yield* Clock.currentTimeMillis
    for (const row of yield* repo.uncorroborated(scope)) {
      const outcome = yield* settle(row)
      if (outcome === "settled") continue
      // Invalidated now: the confirmations step, which read it before, must leave it alone too.
      still.add(identityOf(row))
      if (outcome === "invalidated") {
        invalidated++
        continue
      }
      yield* warnIfLong(row, now)
    }
    return { still, invalidated }
  })
}
