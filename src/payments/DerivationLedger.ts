import { Context, Effect, Layer } from "effect"
import { type CounterBehind, DerivationLedgerRepo } from "./DerivationLedgerRepo.ts"

export type { CounterBehind } from "./DerivationLedgerRepo.ts"

/** One line for the log and the start-up failure, with the way out. */
export const describeBehind = ({ highestIssued, nextIndex, xpub }: CounterBehind) =>
  `the derivation counter of ${xpub} stands at ${nextIndex}, but index ${highestIssued} was already issued in this database: ` +
  `deriving from it would hand out deposit addresses of earlier invoices again (set its start index to at least ${highestIssued + 1}: ` +
  `npm run cli -- data start-index ${xpub} ${highestIssued + 1}, or the payment method's startIndex in the checkout settings)`

/** The warning for a key saved into a database that has never issued an address from it (issue #56). */
export const describeFresh = (xpub: string) =>
  `No deposit address has been issued from ${xpub} in this database: if another database (an earlier installation, ` +
  `the embedded database before a move) issued addresses from it, they will be issued again from index 0 and a late payment ` +
  `to an old invoice would be credited to a new one. Set the method's start index above the highest index issued there.`

/**
 * The per-key record of issued derivation indexes (migration 0023's `derivation_issued`, written
 * with every move of `derivation_counters`) and the checks made against it: a counter behind the record,
 * and a key this database has never derived from.
 */
export class DerivationLedger extends Context.Service<DerivationLedger, {
  /** The keys (all when `xpubs` is undefined) whose counter is at or below an index already issued. */
  readonly behind: (xpubs?: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<CounterBehind>>
  /** Of `xpubs`, those no address was handed out from in this database (pre-derived pool addresses do not count) and no start index moved. */
  readonly neverIssued: (xpubs: ReadonlyArray<string>) => Effect.Effect<ReadonlyArray<string>>
  /** The next index each key's counter hands out (0 for a key without one). */
  readonly nextIndexes: (xpubs: ReadonlyArray<string>) => Effect.Effect<ReadonlyMap<string, number>>
  /** Raises the key's counter to `startIndex` (never lowers it) and drops pooled bitcoin addresses below it, never handed out. */
  readonly raiseStart: (xpub: string, startIndex: number) => Effect.Effect<void>
}>()("Payments/DerivationLedger") {
  static readonly layer = Layer.effect(
    DerivationLedger,
    Effect.gen(function*() {
      const repo = yield* DerivationLedgerRepo
      return { behind: repo.behind, neverIssued: repo.neverIssued, nextIndexes: repo.nextIndexes, raiseStart: repo.raiseStart }
    })
  ).pipe(Layer.provide(DerivationLedgerRepo.layer))
  /**
   * The check at start: a counter behind this database's issued indexes stops the service, with
   * the key, both numbers and the command that raises the counter (one line, StartupFailure.ts).
   */
  static readonly startupCheck = Layer.effectDiscard(Effect.gen(function*() {
    const behind = yield* (yield* DerivationLedger).behind()
    for (const key of behind.slice(1)) yield* Effect.logError(describeBehind(key))
    if (behind.length > 0) return yield* Effect.die(new Error(describeBehind(behind[0]!)))
  }))
}
